import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { inject } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as LockFile from "../../src/storage/LockFile.js"
import { agentPgMigrations } from "../../src/runtime/agentDatabase.js"
import * as Database from "../../src/storage/Database.js"
import * as PgDatabase from "../../src/storage/pg/PgDatabase.js"
import { postgresNotVacuumed } from "../../src/tools/retention/Retention.js"
import type { RetentionReport } from "../../src/tools/retention/RetentionReport.js"
import { runKernIn } from "../support/inProcessCli.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const day = 86_400_000

/** An agent folder whose kern.db holds 20,000 audit events 200 days old (~10 MB) and 100 of today. */
const agentWithOldEvents = async () => {
  const dir = makeTempDir("kern-gc-")
  writeFiles(dir, { ".kern/config.json": JSON.stringify({ model: "m", provider: "openai-compatible", baseURL: "http://127.0.0.1:9/v1" }) })
  const now = Date.now()
  await Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20100)
       INSERT INTO kernel_events (ts_ms, decision_key, run_id, trace_id, status, detail)
       SELECT CASE WHEN i <= 20000 THEN ? ELSE ? END, 'kernel.tool.call', 'run', 'trace', 'ok', ? FROM n`,
      [now - 200 * day, now, "d".repeat(500)]
    )).pipe(Effect.provide(Database.layer({ filename: NodePath.join(dir, ".kern", "kern.db") })), Effect.orDie))
  return dir
}

const eventCount = (dir: string) =>
  Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM kernel_events`).pipe(
    Effect.map((rows) => rows[0]?.n ?? 0),
    Effect.provide(Database.layer({ filename: NodePath.join(dir, ".kern", "kern.db") })),
    Effect.orDie
  ))

describe("kern gc", () => {
  it("--dry-run says what it would free and changes nothing; then gc frees it and vacuums kern.db (no agent runs)", async () => {
    const dir = await agentWithOldEvents()
    const dry = await runKernIn(["gc", dir, "--dry-run"])
    expect(dry.status).toBe(0)
    expect(dry.stdout).toMatch(/^dry run: nothing changed; kern gc would free /)
    expect(dry.stdout).toContain("events would free: 20000 rows")
    expect(await eventCount(dir)).toBe(20_100)

    const run = await runKernIn(["gc", dir, "--json"])
    expect(run.status).toBe(0)
    const report = JSON.parse(run.stdout) as RetentionReport
    expect(report.events.pruned.count).toBe(20_000)
    expect(report.events.kept.count).toBe(100)
    expect(report.database.vacuumed).toBeDefined()
    expect(report.database.vacuumed!.afterBytes).toBeLessThan(report.database.vacuumed!.beforeBytes / 4)
    expect(NodeFs.statSync(NodePath.join(dir, ".kern", "kern.db")).size).toBe(report.database.vacuumed!.afterBytes)
    expect(await eventCount(dir)).toBe(100)
    // The lock it held is released.
    expect(NodeFs.existsSync(NodePath.join(dir, ".kern", "agent.lock")) ? NodeFs.readFileSync(NodePath.join(dir, ".kern", "agent.lock"), "utf8") : "").not.toContain("kern gc")
  })

  it("beside a running agent it prunes and does not vacuum, saying why", async () => {
    const dir = await agentWithOldEvents()
    // This process holds the folder as a running agent would.
    await Effect.runPromise(Effect.gen(function*() {
      const holder = yield* LockFile.currentHolder("kern run")
      yield* LockFile.replaceWhole(NodePath.join(dir, ".kern", "agent.lock"), JSON.stringify(holder))
    }).pipe(Effect.provide(NodeContext.layer), Effect.orDie))
    const run = await runKernIn(["gc", dir])
    expect(run.status).toBe(0)
    expect(run.stdout).toContain("events freed: 20000 rows")
    expect(run.stdout).toContain("not vacuumed: the agent is running")
    expect(await eventCount(dir)).toBe(100)
  })

  it("a folder that is not an agent's is a usage error", async () => {
    const result = await runKernIn(["gc", makeTempDir("kern-gc-empty-")])
    expect(result.status).toBe(2)
  })

  it("on PostgreSQL it prunes the agent's schema and does not vacuum, saying why", async () => {
    const url = inject("postgresUrl")
    const schema = `gc_${process.pid}_${Date.now().toString(36)}`
    const dir = makeTempDir("kern-gc-pg-")
    writeFiles(dir, {
      ".kern/config.json": JSON.stringify({ model: "m", provider: "openai-compatible", baseURL: "http://127.0.0.1:9/v1", database: { url, schema } })
    })
    const onSchema = PgDatabase.layer({ url: Redacted.make(url), shown: url, schema, migrations: agentPgMigrations, maxConnections: 1 })
    const now = Date.now()
    await Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`INSERT INTO kernel_events (ts_ms, decision_key, run_id, trace_id, status, detail)
        SELECT CASE WHEN i <= 2000 THEN ${now - 200 * day}::bigint ELSE ${now}::bigint END, 'kernel.tool.call', 'run', 'trace', 'ok',
          ${"d".repeat(500)} FROM generate_series(1, 2100) AS i`).pipe(Effect.provide(onSchema), Effect.orDie))
    const run = await runKernIn(["gc", dir, "--json"])
    expect(run.status, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout) as RetentionReport
    expect(report.events.pruned.count).toBe(2_000)
    expect(report.events.kept.count).toBe(100)
    expect(report.database.vacuumed).toBeUndefined()
    expect(report.database.notVacuumed).toBe(postgresNotVacuumed)
    expect(report.database.fileBytes).toBeGreaterThan(0)
    const left = await Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM kernel_events`).pipe(
      Effect.provide(onSchema),
      Effect.orDie
    ))
    expect(left).toEqual([{ n: 100 }])
    expect(NodeFs.existsSync(NodePath.join(dir, ".kern", "kern.db"))).toBe(false)
  })
})
