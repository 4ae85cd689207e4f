import { describe, expect, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { inject } from "vitest"
import { initAgentWithModel } from "../support/agentFolder.js"
import { killedAtEnd } from "../support/backgroundAgent.js"
import { runKern } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
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
})
