import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Database from "../../src/storage/Database.js"
import { processRunning } from "../../src/storage/processState.js"
import { ScheduleStore } from "../../src/tools/schedules/ScheduleStore.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { killedAtEnd, recordedPid } from "../support/backgroundAgent.js"
import { runKern } from "../support/cli.js"
import { FakeReply, makeWith as makeFakeServer, type RecordedRequest } from "../support/fakeModelServer.js"
import { eventually, eventuallyEffect } from "../support/waitFor.js"

// Schedules across kill -9 (README, "schedule"): a firing whose turn is cut by a SIGKILL is in the conversation once
// and is not fired again after the restart, even when the agent died before it recorded the run; and runs that came
// due while the agent was down go by the misfire policy (a cron's default, skip: recorded as missed, not fired).

const env = { OPENROUTER_API_KEY: "sk-test" }
const kern = (args: ReadonlyArray<string>, cwd: string) => Effect.promise(() => runKern(args, { cwd, env }))

interface ChatMessage {
  readonly role: string
  readonly content: unknown
}
const lastUser = (body: unknown): string => {
  const messages = (body as { messages?: ReadonlyArray<ChatMessage> }).messages ?? []
  const last = messages.filter((m) => m.role === "user").at(-1)
  return last === undefined ? "" : typeof last.content === "string" ? last.content : JSON.stringify(last.content)
}
const isFiring = (body: unknown) => lastUser(body).includes("[schedule 1, due ")
const firingRequests = (requests: ReadonlyArray<RecordedRequest>) => requests.filter((request) => isFiring(request.body))

interface Line {
  readonly _tag: string
  readonly text?: string
}
/** The operator's conversation: the session files of the main conversation (a sub-conversation's name has `_`). */
const mainLines = (dir: string): ReadonlyArray<Line> => {
  const sessions = NodePath.join(dir, ".kern/sessions")
  if (!NodeFs.existsSync(sessions)) return []
  return NodeFs.readdirSync(sessions).filter((name) => !name.includes("_") && name.endsWith(".jsonl")).flatMap((name) =>
    NodeFs.readFileSync(NodePath.join(sessions, name), "utf8").trim().split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Line)
  )
}
const firingLines = (dir: string) => mainLines(dir).filter((line) => line._tag === "user" && (line.text ?? "").startsWith("[schedule 1, due "))

const Listed = Schema.Array(Schema.Struct({
  id: Schema.Number,
  misfire: Schema.String,
  next: Schema.NullOr(Schema.String),
  nextDueMs: Schema.NullOr(Schema.Number),
  fired: Schema.Number,
  missed: Schema.Number
}))
const listed = (dir: string) =>
  Effect.map(kern(["schedule", "list", dir, "--json"], dir), (result) => Schema.decodeUnknownSync(Schema.parseJson(Listed))(result.stdout))

/** kern.db of `dir` through the store, in this process (the agent is not running: kern.db is the truth). */
const withStore = <A, E>(dir: string, use: Effect.Effect<A, E, ScheduleStore | SqlClient.SqlClient>) =>
  use.pipe(
    Effect.provide(ScheduleStore.Default.pipe(Layer.provideMerge(Database.layer({ filename: NodePath.join(dir, ".kern/kern.db") })))),
    Effect.scoped,
    Effect.orDie
  )

const httpOf = (dir: string) => {
  const config = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern/config.json"), "utf8")) as { port: number }
  const token = /KERN_AUTH_TOKEN=(\S+)/.exec(NodeFs.readFileSync(NodePath.join(dir, ".kern/.env"), "utf8"))?.[1] ?? ""
  return { base: `http://127.0.0.1:${config.port}`, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } }
}

describe("schedules across kill -9", () => {
  it.live("a firing killed mid-turn is in the conversation once and never fires again, recorded or not", () =>
    Effect.scoped(Effect.gen(function*() {
      let firingsAsked = 0
      const server = yield* makeFakeServer({
        fallback: (body) => {
          if (!isFiring(body)) return FakeReply.text("fine")
          firingsAsked++
          // The first time, the turn's request is held: the kill comes while the model has it.
          return firingsAsked === 1 ? FakeReply.text("too late", { delay: "10 minutes" }) : FakeReply.text("checked the backups")
        }
      })
      const dir = initAgentWithModel(server.baseURL, { heartbeatInterval: 0, autoCommit: false, timezone: "UTC" })
      yield* killedAtEnd(dir)
      expect((yield* kern(["start"], dir)).status).toBe(0)
      const pid = recordedPid(dir)

      // A one-shot two seconds from now, added over HTTP: the running agent's Scheduler is woken at once.
      const http = httpOf(dir)
      const added = yield* Effect.promise(() =>
        fetch(`${http.base}/schedules`, {
          method: "POST",
          headers: http.headers,
          body: JSON.stringify({ prompt: "check the backups", at: new Date(Date.now() + 2_000).toISOString() })
        }).then(async (response) => ({ status: response.status, body: await response.json() as { schedule: { id: number; nextDueMs: number } } }))
      )
      expect(added.status).toBe(201)
      expect(added.body.schedule.id).toBe(1)
      const dueMs = added.body.schedule.nextDueMs

      expect(yield* eventuallyEffect(Effect.map(server.modelRequests, (all) => firingRequests(all).length === 1))).toBe(true)
      process.kill(pid, "SIGKILL")
      expect(yield* eventually(() => !processRunning(pid))).toBe(true)
      expect(firingLines(dir)).toHaveLength(1)
      expect(mainLines(dir).filter((line) => line._tag === "assistant")).toHaveLength(0)

      // The worst moment to die: the firing posted, its run not yet recorded (Followups' key is in kern.db, the
      // schedule is still due at its time). Whatever the kill found, kern.db is put in that state.
      yield* withStore(dir, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`DELETE FROM schedule_runs WHERE schedule_id = 1`
        yield* sql`UPDATE schedules SET next_due_ms = ${dueMs} WHERE id = 1`
      }))
      expect(yield* listed(dir)).toMatchObject([{ id: 1, nextDueMs: dueMs, fired: 0, missed: 0 }])

      expect((yield* kern(["start"], dir)).status).toBe(0)
      // The restarted Scheduler finds the run due, finds it posted, and only records it.
      expect(yield* eventuallyEffect(Effect.map(listed(dir), ([row]) => row?.fired === 1 && row.next === null))).toBe(true)
      // A message after the restart is answered after anything the restart replayed into the same conversation.
      const asked = yield* kern(["chat", "-m", "anything else?"], dir)
      expect(asked.status, asked.stderr).toBe(0)
      expect(firingLines(dir)).toHaveLength(1)
      // The firing was with the model once before the kill, and at most once after it.
      expect(firingRequests(yield* server.modelRequests).length).toBeLessThanOrEqual(2)
      expect((yield* kern(["stop"], dir)).status).toBe(0)

      // Another start and stop: nothing fires again.
      expect((yield* kern(["start"], dir)).status).toBe(0)
      const again = yield* kern(["chat", "-m", "and now?"], dir)
      expect(again.status, again.stderr).toBe(0)
      expect((yield* kern(["stop"], dir)).status).toBe(0)
      expect(firingLines(dir)).toHaveLength(1)
      expect(firingRequests(yield* server.modelRequests).length).toBeLessThanOrEqual(2)
      expect(yield* listed(dir)).toMatchObject([{ id: 1, fired: 1, missed: 0, next: null }])
    })), 240_000)

  it.live("a cron down across three of its runs: skip records them missed, fires none, and goes on at the next", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer({ fallback: FakeReply.text("fine") })
      const dir = initAgentWithModel(server.baseURL, { heartbeatInterval: 0, autoCommit: false, timezone: "UTC" })
      yield* killedAtEnd(dir)
      // Hourly, at the minute half an hour from now: its latest run is at least 30 minutes ago, its next 30 ahead.
      const minute = (new Date().getUTCMinutes() + 30) % 60
      const add = yield* kern(["schedule", "add", "hourly check", dir, "--cron", `${minute} * * * *`], dir)
      expect(add.status, add.stderr).toBe(0)
      expect((yield* kern(["start"], dir)).status).toBe(0)
      expect((yield* kern(["stop"], dir)).status).toBe(0)

      // Down across three runs: the schedule's due time set three runs back (what a down agent leaves behind).
      const hour = 3_600_000
      const nowMs = Date.now()
      const atMinute = Math.floor(nowMs / hour) * hour + minute * 60_000
      const latest = atMinute <= nowMs ? atMinute : atMinute - hour
      const first = latest - 2 * hour
      yield* withStore(dir, Effect.flatMap(ScheduleStore, (store) =>
        Effect.flatMap(store.list, ([row]) => store.settle(row!.id, row!.nextDueMs!, { fired: [], missed: [] }, first))))
      expect(yield* listed(dir)).toMatchObject([{ id: 1, misfire: "skip", nextDueMs: first, fired: 0, missed: 0 }])

      expect((yield* kern(["start"], dir)).status).toBe(0)
      expect(yield* eventuallyEffect(Effect.map(listed(dir), ([row]) => row?.missed === 3))).toBe(true)
      const asked = yield* kern(["chat", "-m", "anything scheduled?"], dir)
      expect(asked.status, asked.stderr).toBe(0)
      expect((yield* kern(["stop"], dir)).status).toBe(0)

      const [row] = yield* listed(dir)
      expect(row).toMatchObject({ fired: 0, missed: 3, nextDueMs: latest + hour })
      const table = yield* kern(["schedule", "list", dir], dir)
      expect(table.stdout).toContain(`3 (last ${new Date(latest).toISOString().slice(0, 19)}+00:00)`)
      // Nothing fired: no schedule message reached the conversation or the model.
      expect(mainLines(dir).filter((line) => line._tag === "user" && (line.text ?? "").startsWith("[schedule "))).toHaveLength(0)
      expect((yield* server.modelRequests).filter((request) => lastUser(request.body).includes("[schedule "))).toHaveLength(0)
    })), 240_000)
})
