import { describe, expect, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { inject } from "vitest"
import { initAgentWithModel } from "../support/agentFolder.js"
import { killedAtEnd } from "../support/backgroundAgent.js"
import { runKern } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { writeSessionFixture } from "../support/sessionFixture.js"
import { eventuallyEffect } from "../support/waitFor.js"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

// Two real agents whose kern.db is the run's PostgreSQL server (test/support/postgresSetup.ts), each in its own
// schema: turns are answered, recall indexes and searches on PostgreSQL (keywords: Debian's server has no pgvector),
// and nothing of one agent is in the other's schema. No kern.db file is made.

const env = { OPENROUTER_API_KEY: "sk-test" }

/** Priced, so that `kern status` lists no problem of its own and exits 0. */
const prices = { "test-model": { input: 1, output: 4 } }

const kern = (args: ReadonlyArray<string>) => Effect.promise(() => runKern(args, { env }))

const suffix = () => `${process.pid}_${Date.now().toString(36)}`

/** Rows of the agent's schema, read on a connection of the test's own. */
const inSchema = <A>(body: (sql: PgClient.PgClient) => Effect.Effect<A, unknown>) =>
  Effect.flatMap(PgClient.PgClient, body).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(inject("postgresUrl")), maxConnections: 1 })),
    Effect.orDie
  )

const count = (schema: string, table: string, where = "TRUE") =>
  inSchema((sql) => sql.unsafe<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".${table} WHERE ${where}`)).pipe(
    Effect.map((rows) => rows[0]?.n ?? 0)
  )

describe("an agent on PostgreSQL", () => {
  it.live("answers, recalls by keywords from its own schema, and keeps apart from another agent's", () =>
    Effect.scoped(Effect.gen(function*() {
      const url = inject("postgresUrl")
      const server = yield* makeFakeServer
      const tag = suffix()
      const schemas = { a: `pga_${tag}`, b: `pgb_${tag}` }
      const a = initAgentWithModel(server.baseURL, { prices, database: { url, schema: schemas.a } })
      const b = initAgentWithModel(server.baseURL, { prices, database: { url, schema: schemas.b } })

      yield* server.reply(FakeReply.text("Noted."))
      const first = yield* kern(["chat", a, "-m", "the gate code is zebracorn"])
      expect(first.status, first.stderr).toBe(0)
      expect(first.stdout).toContain("Noted.")
      yield* server.reply(FakeReply.text("Hello from b."))
      const other = yield* kern(["chat", b, "-m", "hello there"])
      expect(other.status, other.stderr).toBe(0)

      const found = yield* kern(["recall", "search", "zebracorn", "--dir", a, "--json"])
      expect(found.status, found.stderr).toBe(0)
      const hits = (out: string) => (JSON.parse(out) as { hits: ReadonlyArray<unknown> }).hits
      expect(JSON.stringify(hits(found.stdout))).toContain("zebracorn")
      const missing = yield* kern(["recall", "search", "zebracorn", "--dir", b, "--json"])
      expect(missing.status, missing.stderr).toBe(0)
      expect(hits(missing.stdout)).toEqual([])

      const status = yield* kern(["status", a])
      expect(status.status, status.stdout + status.stderr).toBe(0)
      expect(status.stdout).toContain("embeddings: keyword-only (the PostgreSQL server has no pgvector")
      expect(status.stdout).toContain(`schema ${schemas.a}`)
      expect(status.stdout).not.toContain(new URL(url).password || "\u0000never")
      // Said once, in the status: not again as a raw log line on stderr.
      expect(status.stderr).not.toContain("pgvector")

      // The running agent: its conversations' journal (the cluster's tables) is in the schema too (processed
      // messages are pruned from it; none is left pending), and two turns through it are answered in order.
      yield* killedAtEnd(a)
      const started = yield* kern(["start", a])
      expect(started.status, started.stderr).toBe(0)
      for (const word of ["one", "two"]) {
        yield* server.reply(FakeReply.text(`reply ${word}`))
        const through = yield* kern(["chat", a, "-m", `message ${word}`])
        expect(through.status, through.stderr).toBe(0)
        expect(through.stdout).toContain(`reply ${word}`)
      }
      const stopped = yield* kern(["stop", a])
      expect(stopped.status, stopped.stderr).toBe(0)

      for (const dir of [a, b]) expect(NodeFs.existsSync(NodePath.join(dir, ".kern/kern.db"))).toBe(false)

      const rows = yield* Effect.gen(function*() {
        const sql = yield* PgClient.PgClient
        const count = (schema: string, text: string) =>
          sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(schema)}.recall_messages WHERE text LIKE ${`%${text}%`}`.pipe(
            Effect.map((r) => r[0]?.n ?? 0)
          )
        const pending = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(schemas.a)}.cluster_messages WHERE NOT processed`
        return {
          aHas: yield* count(schemas.a, "zebracorn"),
          bHas: yield* count(schemas.b, "zebracorn"),
          bOwn: yield* count(schemas.b, "hello there"),
          pending: pending[0]?.n
        }
      }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })), Effect.orDie)
      expect(rows).toEqual({ aHas: 1, bHas: 0, bOwn: 1, pending: 0 })
    })), { timeout: 240_000 })

  it.live("a long conversation's segments and summaries, a background job and a schedule live in its schema", () =>
    Effect.scoped(Effect.gen(function*() {
      const url = inject("postgresUrl")
      const server = yield* makeFakeServer
      // Every summary (segments and their rollup) is the summary model's; the turn's replies are queued below.
      yield* server.answerModel("cheap", FakeReply.text("The router's DHCP range moved; DNS is on the pi."))
      const schema = `pgc_${suffix()}`
      const dir = initAgentWithModel(server.baseURL, {
        prices: { ...prices, cheap: { input: 1, output: 1 } },
        summaryModel: "cheap",
        database: { url, schema },
        maxContextTokens: 20_000,
        recall: false,
        embeddingModel: false,
        heartbeatInterval: 0,
        autoCommit: false
      })
      // ~180k tokens of conversation against a 20k window: the turn trims it, and segments and summaries follow.
      const sessionId = "20261122-100000-000-beef"
      writeSessionFixture(dir, 3_000, sessionId)
      // The fixture leaves an empty kern.db for SQLite's sake (sessions without one are refused there): not here.
      NodeFs.rmSync(NodePath.join(dir, ".kern/kern.db"))

      yield* killedAtEnd(dir)
      const started = yield* kern(["start", dir])
      expect(started.status, started.stderr).toBe(0)
      yield* server.reply(
        FakeReply.toolCalls([{ id: "j1", name: "bash", args: { command: "echo job-output-on-postgres", background: true } }]),
        FakeReply.text("Started the report in the background.")
      )
      const chat = yield* kern(["chat", dir, "-m", "run the report in the background"])
      expect(chat.status, chat.stderr).toBe(0)
      expect(chat.stdout).toContain("Started the report in the background.")

      // The job's row ends as finished; the segments and their summaries are written after the answer.
      const jobs = Effect.map(kern(["jobs", "--dir", dir, "--json"]), (listed) =>
        JSON.parse(listed.stdout) as ReadonlyArray<{ id: number; state: string; command: string }>)
      expect(yield* eventuallyEffect(Effect.map(jobs, (rows) => rows[0]?.state === "finished"))).toBe(true)
      expect(yield* jobs).toMatchObject([{ id: 1, state: "finished", command: "echo job-output-on-postgres" }])
      const summarized = count(schema, "context_segments", "summary IS NOT NULL")
      expect(yield* eventuallyEffect(Effect.map(summarized, (n) => n >= 10))).toBe(true)
      const listed = yield* kern(["segments", "list", "--dir", dir, "--json"])
      expect(listed.status, listed.stderr).toBe(0)
      const tree = JSON.parse(listed.stdout) as { sessionId: string; segments: ReadonlyArray<{ level: number; summary: string | null }> }
      expect(tree.sessionId).toBe(sessionId)
      expect(tree.segments.filter((segment) => segment.level === 0 && segment.summary !== null).length).toBeGreaterThanOrEqual(10)

      const added = yield* kern(["schedule", "add", "water the plants", dir, "--at", "in 3 days at 09:00", "--json"])
      expect(added.status, added.stderr).toBe(0)
      const schedules = yield* kern(["schedule", "list", dir, "--json"])
      expect(schedules.status, schedules.stderr).toBe(0)
      expect(schedules.stdout).toContain("water the plants")
      const stopped = yield* kern(["stop", dir])
      expect(stopped.status, stopped.stderr).toBe(0)

      // Nothing fell back to SQLite: no kern.db file, and every row is in the agent's schema.
      expect(NodeFs.existsSync(NodePath.join(dir, ".kern/kern.db"))).toBe(false)
      const rows = yield* Effect.all({
        segments: count(schema, "context_segments", "summary IS NOT NULL AND level = 0"),
        cuts: count(schema, "context_cuts"),
        jobs: count(schema, "background_jobs", "state = 'finished'"),
        schedules: count(schema, "schedules", "prompt = 'water the plants'"),
        health: count(schema, "context_summarizer", "consecutive_failures = 0")
      })
      expect(rows.segments).toBeGreaterThanOrEqual(10)
      expect(rows).toMatchObject({ cuts: 1, jobs: 1, schedules: 1, health: 1 })
    })), { timeout: 240_000 })
})
