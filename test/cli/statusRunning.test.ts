import { describe, expect, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import type { StatusResponse } from "../../src/channels/web/api.js"
import { bearer, request, startServer } from "../channels/web/harness.js"
import { FakeReply } from "../support/fakeModelServer.js"
import { runKernIn } from "../support/inProcessCli.js"

// What runs in the background shows where the operator looks: `kern status` (text and --json, read from kern.db) and
// GET /status list the running background jobs and sub-agents, each with its id, clipped command or task, and age.

const longCommand = `sleep 600 # ${"waiting for the build to finish ".repeat(4)}`
/** A task with a terminal escape (a model's text is hostile) and a newline. */
const task = "watch the deploy\u001b[2J\nand wait forever"

const userTexts = (body: Record<string, unknown>) =>
  ((body.messages ?? []) as ReadonlyArray<{ role: string; content: unknown }>)
    .filter((m) => m.role === "user")
    .map((m) => typeof m.content === "string" ? m.content : JSON.stringify(m.content))
const stepOf = (body: Record<string, unknown>) => {
  const messages = (body.messages ?? []) as ReadonlyArray<{ role: string }>
  const lastUser = messages.map((m) => m.role).lastIndexOf("user")
  return messages.slice(lastUser + 1).filter((m) => m.role === "assistant").length
}

const env = { OPENROUTER_API_KEY: "sk-test" }
const status = (args: ReadonlyArray<string>) => Effect.promise(() => runKernIn(["status", ...args], { env }))

describe("running background jobs and sub-agents in the status", () => {
  it.live("GET /status and `kern status` (text and --json) list them while the agent runs; a stopped agent's leftovers are named as such", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.scoped(Effect.gen(function*() {
        const { base, dir } = yield* startServer({
          config: { recall: false, embeddingModel: false },
          model: {
            fallback: (body) => {
              // The sub-agent's turn waits on its model: it stays running.
              if (userTexts(body).some((text) => text.includes("You are a sub-agent"))) return FakeReply.text("too late", { delay: "10 minutes" })
              return stepOf(body) === 0
                ? FakeReply.toolCalls([
                  { id: "b1", name: "bash", args: { command: longCommand, background: true } },
                  { id: "s1", name: "spawn", args: { task } }
                ])
                : FakeReply.text("both started")
            }
          }
        })
        const get = request(`${base}/status`, { headers: bearer }).pipe(Effect.map((answer) => answer.json as StatusResponse))
        const idle = yield* get
        expect(idle.jobs).toEqual({ count: 0, running: [] })
        expect(idle.subagents).toEqual({ count: 0, running: [] })

        expect((yield* request(`${base}/message`, {
          method: "POST",
          headers: { ...bearer, "content-type": "application/json" },
          body: JSON.stringify({ text: "start the build and watch the deploy" })
        })).status).toBe(202)
        const busy = yield* get.pipe(
          Effect.filterOrFail((s) => s.runtime.turns >= 1 && (s.jobs?.count ?? 0) >= 1 && (s.subagents?.count ?? 0) >= 1, () => "not yet"),
          Effect.retry(Schedule.spaced("50 millis")),
          Effect.timeout("60 seconds")
        )
        expect(busy.jobs).toEqual({
          count: 1,
          running: [{ id: 1, command: "sleep 600 # waiting for the build to finish waiting for the…", startedAt: expect.any(String), ageMs: expect.any(Number) }]
        })
        expect(busy.jobs?.running[0]?.command.length).toBe(60)
        expect(busy.subagents).toEqual({
          count: 1,
          running: [{ id: 1, task: "watch the deploy\u001b[2J and wait forever", depth: 1, startedAt: expect.any(String), ageMs: expect.any(Number) }]
        })

        // `kern status` reads the same from kern.db while the agent runs.
        const json = JSON.parse((yield* status([dir, "--json"])).stdout)
        expect(json.jobs).toEqual(JSON.parse(JSON.stringify({ ...busy.jobs, running: [{ ...busy.jobs!.running[0], ageMs: json.jobs.running[0].ageMs }] })))
        expect(json.jobs.running[0].ageMs).toBeGreaterThanOrEqual(busy.jobs!.running[0]!.ageMs)
        expect(json.subagents).toMatchObject({ count: 1, running: [{ id: 1, task: "watch the deploy\u001b[2J and wait forever", depth: 1 }] })
        const text = (yield* status([dir])).stdout
        expect(text).toContain("jobs:      1 running (kern jobs lists them)")
        expect(text).toMatch(/\n {2}1 \d+(\.\d)?s sleep 600 # waiting for the build/)
        expect(text).toContain("subagents: 1 running")
        // The task on one line, its escape shown, not obeyed.
        expect(text).toMatch(/\n {2}1 \d+(\.\d)?s watch the deploy\^\[\[2J and wait forever/)
        expect(text).not.toContain("\u001b[2J")
        expect(text).not.toContain("left:")
        return dir
      }))

      // Stopped: their rows are still `running` in kern.db, but nothing runs them; the next start reports them.
      const json = JSON.parse((yield* status([dir, "--json"])).stdout)
      expect(json.jobs).toBeNull()
      expect(json.subagents).toBeNull()
      const text = (yield* status([dir])).stdout
      expect(text).not.toContain("jobs:      1 running")
      expect(text).toContain(
        "left:      1 background job and 1 sub-agent the agent's last run left unfinished (reported as interrupted when it starts)"
      )
    }), 120_000)
})
