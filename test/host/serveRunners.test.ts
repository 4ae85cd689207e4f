import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import * as NodePath from "node:path"
import { initAgentWithModel } from "../support/agentFolder.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { envValue, lockRunner, runnerAgentConfig, type RunningHost, startRunner } from "../support/hostServe.js"
import { shardLocksHeld, startPostgres } from "../support/postgres.js"
import { eventually, eventuallyEffect } from "../support/waitFor.js"

// Two real `kern serve` runners on one throwaway PostgreSQL server, sharing one set of agent folders (host.json's
// `database` and `cluster`): every agent answers through either runner, the agents split between them, and after
// kill -9 of one its agents answer through the survivor once its locks expire; no message is lost or answered twice.

const env = { OPENROUTER_API_KEY: "sk-test" }
const names = ["a0", "a1", "a2", "a3", "a4", "a5"]

interface Answer {
  readonly status: number
  readonly body: string
}

const post = (port: number, target: string, token: string, body: unknown) =>
  Effect.async<Answer>((resume) => {
    const data = JSON.stringify(body)
    const request = NodeHttp.request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: target,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }
    }, (response) => {
      let text = ""
      response.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")))
      response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, body: text })))
    })
    request.on("error", (error) => resume(Effect.succeed({ status: 0, body: error.message })))
    request.end(data)
  })

/** How many user messages with exactly `text` the agent's session files hold. */
const recorded = (dir: string, text: string): number => {
  const sessions = NodePath.join(dir, ".kern/sessions")
  if (!NodeFs.existsSync(sessions)) return 0
  let count = 0
  for (const file of NodeFs.readdirSync(sessions).filter((f) => f.endsWith(".jsonl"))) {
    for (const line of NodeFs.readFileSync(NodePath.join(sessions, file), "utf8").split("\n")) {
      if (line.includes("\"user\"") && line.includes(JSON.stringify(text))) count++
    }
  }
  return count
}

describe("kern serve: runners sharing agents on PostgreSQL", () => {
  it.live("agents split between two runners, each answers through either; after kill -9 of one its agents answer through the survivor, once each", () =>
    Effect.scoped(Effect.gen(function*() {
      const pg = yield* startPostgres
      const url = Redacted.value(pg.url)
      const server = yield* makeFakeServer
      // One set of folders both runners host (on one machine: the shared filesystem of runners on several).
      const dirs = new Map(names.map((name) => [name, initAgentWithModel(server.baseURL, runnerAgentConfig(url, `kern_${name}`))] as const))
      const agents = Object.fromEntries(names.map((name) => [name, dirs.get(name)!]))
      // Two shards: each runner holds one, and the agents' names fall three on each (a0, a2, a4 on the first; a1, a3, a5
      // on the second), so the agents split between the runners whichever ports they have.
      const runner = (label: string) => startRunner(label, { agents, url, idleSeconds: 0, env, shards: 2 })
      // a holds every shard before b starts. Started together, a runner that has not yet seen the other takes shards
      // that are not its own, and starts agents on them that then stay until their next move.
      const a = yield* runner("a")
      expect(yield* eventuallyEffect(shardLocksHeld(pg.url, 1, 2), 60_000), a.host.stderr()).toBe(true)
      const b = yield* runner("b")
      const output = () => `--- a\n${a.host.stderr()}\n--- b\n${b.host.stderr()}`
      // b joined: a has let go of b's shard (its ring holds b), and b holds it.
      expect(yield* eventuallyEffect(shardLocksHeld(pg.url, 2, 2), 60_000), output()).toBe(true)
      expect(yield* eventually(() => names.every((name) => envValue(NodePath.join(dirs.get(name)!, ".kern/.env"), "KERN_AUTH_TOKEN") !== undefined))).toBe(true)
      const token = (name: string) => envValue(NodePath.join(dirs.get(name)!, ".kern/.env"), "KERN_AUTH_TOKEN")!

      let sent = 0
      const texts: Array<string> = []
      /** One message to each agent through `via`: accepted, and answered by a model request carrying it. */
      const round = (via: RunningHost, label: string, who: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          for (const name of who) {
            const text = `${label} message ${++sent} for ${name}`
            texts.push(text)
            yield* server.reply(FakeReply.text(`answer ${sent}`))
            const answer = yield* post(via.port, `/agents/${name}/message`, token(name), { text })
            expect(answer.status, `${name}: ${answer.body}\n${output()}`).toBeLessThan(300)
          }
          const asked = (text: string) =>
            Effect.map(server.modelRequests, (requests) => requests.some((r) => JSON.stringify(r.body).includes(text)))
          for (const text of texts.slice(-who.length)) {
            expect(yield* eventuallyEffect(asked(text), 120_000), `${text}\n${output()}`).toBe(true)
          }
        })

      // Through a: every agent answers, wherever the cluster placed it (a proxies to b what b holds).
      yield* round(a.host, "first", names)
      // Each agent's folder is held by the runner the cluster placed it on; both runners hold some.
      expect(yield* eventually(() => names.every((name) => lockRunner(dirs.get(name)!) !== undefined))).toBe(true)
      const holders = new Map(names.map((name) => [name, lockRunner(dirs.get(name)!)!]))
      const onA = names.filter((name) => holders.get(name) === a.address)
      const onB = names.filter((name) => holders.get(name) === b.address)
      expect(onA.length + onB.length, JSON.stringify([...holders])).toBe(names.length)
      expect(onA.length, JSON.stringify([...holders])).toBeGreaterThan(0)
      expect(onB.length, JSON.stringify([...holders])).toBeGreaterThan(0)
      // Through b as well.
      yield* round(b.host, "second", names)

      // kill -9 a: its agents answer through b once a's locks expire (the request waits for the move).
      a.host.child()?.kill("SIGKILL")
      yield* round(b.host, "after", names)
      expect(yield* eventually(() => onA.every((name) => lockRunner(dirs.get(name)!) === b.address)), output()).toBe(true)

      // Nothing accepted was lost or answered twice: each message is in its agent's session once, and asked once.
      const requests = yield* server.modelRequests
      for (const text of texts) {
        const name = text.split(" ").at(-1)!
        expect(recorded(dirs.get(name)!, text), `${text}\n${output()}`).toBe(1)
        const asking = requests.filter((r) => {
          const body = r.body as { input?: ReadonlyArray<unknown>; messages?: ReadonlyArray<unknown> }
          const last = [...(body.input ?? body.messages ?? [])].reverse().find((m) => JSON.stringify(m).includes("\"user\""))
          return JSON.stringify(last ?? "").includes(text)
        })
        expect(asking.length, text).toBe(1)
      }

      // Each agent's kern.db is its PostgreSQL schema (no kern.db file); the cluster's tables are in kern_cluster.
      const rows = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const events = yield* Effect.forEach(names, (name) =>
          Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(`kern_${name}`)}.kernel_events`, (r) => r[0]?.n ?? 0))
        const runners = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM kern_cluster.cluster_runners`
        return { events, runners: runners[0]?.n ?? 0 }
      }).pipe(Effect.provide(PgClient.layer({ url: pg.url, maxConnections: 1 }).pipe(Layer.orDie)), Effect.orDie)
      for (const [i, name] of names.entries()) expect(rows.events[i], name).toBeGreaterThan(0)
      expect(rows.runners).toBeGreaterThan(0)
      for (const dir of dirs.values()) expect(NodeFs.existsSync(NodePath.join(dir, ".kern/kern.db"))).toBe(false)
    })), 400_000)
})
