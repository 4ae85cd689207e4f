import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Redacted } from "effect"
import { inject } from "vitest"
import { databaseTarget, schemaFor } from "../../src/config/database.js"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { EventLog, layerSql as eventLogSql } from "../../src/kernel/EventLog.js"
import { makeSpendLedger } from "../../src/model/SpendLedger.js"
import { usageTotals } from "../../src/session/usageTotals.js"
import * as PgDatabase from "../../src/storage/pg/PgDatabase.js"
import { pgMigrations } from "../../src/storage/pg/migrations.js"
import { ContextStats } from "../../src/tools/ContextStats.js"
import { databases } from "../support/databases.js"

// kern.db on PostgreSQL (config `database: { url }`): the layer, its schema per agent, its errors; and repositories
// whose SQL differs between the two databases, run on both.

const url = () => inject("postgresUrl")
const agentLayer = (schema: string, at = url()) =>
  PgDatabase.layer({ url: Redacted.make(at), shown: at, schema, migrations: pgMigrations, maxConnections: 2 })

describe("kern.db on PostgreSQL", () => {
  it.live("two agents on one server keep their tables in schemas of their own", () =>
    Effect.gen(function*() {
      const write = (schema: string, value: string) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO kern_meta (key, value) VALUES ('who', ${value})`).pipe(
          Effect.provide(agentLayer(schema))
        )
      const read = (schema: string) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ value: string }>`SELECT value FROM kern_meta`).pipe(
          Effect.provide(agentLayer(schema))
        )
      const [a, b] = [`kern_apart_a_${process.pid}`, `kern_apart_b_${process.pid}`]
      yield* write(a, "alice")
      yield* write(b, "bob")
      expect(yield* read(a)).toEqual([{ value: "alice" }])
      expect(yield* read(b)).toEqual([{ value: "bob" }])
      // Opened again, the schema is kept and not migrated twice.
      const tables = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ tableSchema: string; n: number }>`SELECT table_schema, count(*) AS n FROM information_schema.tables
          WHERE table_schema IN (${a}, ${b}) GROUP BY table_schema ORDER BY table_schema`).pipe(Effect.provide(agentLayer(a)))
      expect(tables.map((row) => row.tableSchema)).toEqual([a, b])
      expect(tables[0]!.n).toBe(tables[1]!.n)
      expect(tables[0]!.n).toBeGreaterThan(25)
    }))

  it.live("64-bit integers come back as numbers while a number holds them exactly, and as text past 2^53", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ count: unknown; time: unknown; snowflake: unknown; sum: unknown }>`SELECT
        count(*) AS count, CAST(${"1795000000000"} AS BIGINT) AS time,
        CAST(${"9007199254740993"} AS BIGINT) AS snowflake, CAST(${"2.5"} AS NUMERIC) AS sum FROM kern_meta`
      // The cluster's journal ids (snowflakes) must never be rounded: a rounded id names another message.
      expect(row).toEqual({ count: 0, time: 1795000000000, snowflake: "9007199254740993", sum: 2.5 })
    }).pipe(Effect.provide(agentLayer(`kern_ints_${process.pid}`))))

  it.live("a refused login and an unreachable server are DatabaseErrors naming the server, never the password", () =>
    Effect.gen(function*() {
      const server = new URL(url())
      const nobody = `postgres://nobody:hunter2-secret@${server.host}/postgres`
      const refused = yield* Effect.flip(Layer.build(agentLayer("kern_x", nobody)).pipe(Effect.scoped))
      expect(refused._tag).toBe("DatabaseError")
      expect(refused.message).toContain(`postgres://nobody@${server.host}/postgres`)
      expect(refused.message).toMatch(/role "nobody" does not exist/)
      expect(refused.message).not.toContain("hunter2")
      const closed = `postgres://kern:hunter2-secret@127.0.0.1:1/postgres`
      const unreachable = yield* Effect.flip(Layer.build(agentLayer("kern_x", closed)).pipe(Effect.scoped))
      expect(unreachable.message).toContain("could not open")
      expect(unreachable.message).toMatch(/ECONNREFUSED/)
      expect(unreachable.message).not.toContain("hunter2")
    }))
})

describe("database: { url } in the config", () => {
  const env = { PGPASS: "s3cret-password" }
  it("resolves ${NAME} references, derives the schema from the agent's name and knows the password as a secret", () => {
    const target = databaseTarget({ name: "Team-Bot", database: { url: "postgres://kern:${PGPASS}@db:5432/kern" } }, env, "x")
    expect(Either.getOrThrow(target)).toMatchObject({ _tag: "postgres", shown: "postgres://kern@db:5432/kern", schema: "kern_team_bot", password: "s3cret-password" })
    expect(schemaFor("a".repeat(80))).toHaveLength(63)
    expect(Either.getOrThrow(databaseTarget({ name: "a" }, env, "/f/kern.db"))).toEqual({ _tag: "sqlite", file: "/f/kern.db" })
  })

  it("a missing variable or a URL that is not postgres:// is a DatabaseConfigError that does not repeat the password", () => {
    const missing = databaseTarget({ name: "a", database: { url: "postgres://kern:${NOPE}@db/kern" } }, env, "x")
    expect(Either.isLeft(missing) && missing.left.message).toBe("database.url: it references ${NOPE}, which is not set (.kern/.env or the environment)")
    const bad = databaseTarget({ name: "a", database: { url: "${PGPASS}" } }, env, "x")
    expect(Either.isLeft(bad) && bad.left.message).not.toContain("s3cret")
  })

  it("the password is among the known secrets, so the redactor replaces it wherever it would show", () => {
    const secrets = KnownSecrets.fromConfig({
      paths: { dbFile: "x" },
      config: { name: "a", mcpServers: {}, database: { url: "postgres://kern:literal-password@db/kern" } },
      env: {},
      secretKeys: []
    } as never)
    expect(secrets.secrets.map((s) => s.value)).toContain("literal-password")
  })
})

describe.each(databases)("repositories whose SQL differs between the databases, on $dialect", ({ layer }) => {
  it.effect("audit events are written in order and finished turns' usage summed from their JSON detail", () =>
    Effect.gen(function*() {
      const log = yield* EventLog
      const detail = (inputTokens: number) => JSON.stringify({ kind: "turn", usage: { inputTokens, outputTokens: 2, costUsdCents: 0.5 } })
      for (const [i, tokens] of [10, 20].entries()) {
        yield* log.record({ decisionKey: "kernel.run.finished", runId: `r${i}`, traceId: "t", status: "ok", latencyMs: 1.5, contractMismatch: true, detail: detail(tokens) })
      }
      yield* log.record({ decisionKey: "kernel.run.finished", runId: "r9", traceId: "t", status: "ok", detail: JSON.stringify({ kind: "agentic" }) })
      yield* log.flush
      const recent = yield* log.recent(10)
      expect(recent.map((event) => event.runId)).toEqual(["r9", "r1", "r0"])
      expect(recent[1]).toMatchObject({ latencyMs: 1.5, contractMismatch: true })
      expect(yield* log.count).toBe(3)
      expect(yield* usageTotals).toMatchObject({ turns: 2, inputTokens: 30, outputTokens: 4, costUsdCents: 1 })
    }).pipe(Effect.provide(eventLogSql.pipe(Layer.provide(KnownSecrets.layerNone), Layer.provideMerge(layer)))))

  it.effect("the spend ledger and context stats add to the row they upsert", () =>
    Effect.gen(function*() {
      const ledger = yield* makeSpendLedger
      const entries = [{ scope: "agent", key: "" }, { scope: "user", key: "u1" }] as const
      yield* ledger.add("2026-11-27", entries, { inputTokens: 5, outputTokens: 1, costMicroUsd: 7 })
      const rows = yield* ledger.add("2026-11-27", entries, { inputTokens: 5, outputTokens: 1, costMicroUsd: 7 })
      expect(rows.map((row) => [row.scope, row.calls, row.inputTokens, row.costMicroUsd])).toEqual([["agent", 2, 10, 14], ["user", 2, 10, 14]])
      const stats = yield* ContextStats
      yield* stats.recordCompaction("s1", 100, 40)
      yield* stats.recordCompaction("s1", 100, 40)
      expect(yield* stats.get("s1")).toMatchObject({ compactions: 2, savedByCompactionBytes: 120 })
    }).pipe(Effect.provide(ContextStats.Default.pipe(Layer.provideMerge(layer)))))
})
