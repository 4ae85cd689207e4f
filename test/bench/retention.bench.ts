import * as NodeContext from "@effect/platform-node/NodeContext"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import { AgentConfig } from "../../src/config/AgentConfig.js"
import { agentPaths } from "../../src/config/paths.js"
import { KernConfigFile } from "../../src/config/schema.js"
import * as Database from "../../src/storage/Database.js"
import { Retention } from "../../src/tools/retention/Retention.js"
import type { Bench } from "./bench.js"

// retention.gc.events.1m: `kern gc` (Retention.run, the agent stopped, so it vacuums) of a kern.db holding 1,000,000
// audit events shaped like the kernel's (a tool call's row with a ~200-byte detail), 900,000 of them past the 90 days
// of `retention.events`: the time of the prune in batches (the samples) against the floor measured in the same run on
// an identical copy, one `DELETE` of the same rows in one statement (no batches, no usage carried, no vacuum). Extra
// figures: the bytes freed (estimated, and the file before and after VACUUM), the VACUUM's time, the longest the event
// loop was blocked during the batched prune (what a turn's writes would wait for at most), and the estimate's
// accuracy against SQLite's own page count (dbstat) of the table and its indexes.

const day = 86_400_000
const total = 1_000_000
const old = 900_000

const loaded = (dir: string) => ({
  paths: agentPaths(dir),
  fileExists: true,
  config: { ...Schema.decodeUnknownSync(KernConfigFile)({ retention: { events: { maxAgeDays: 90, maxBytes: null } } }), name: "bench" },
  env: {},
  secretKeys: [],
  warnings: []
})

const withDb = <A>(dir: string, effect: Effect.Effect<A, unknown, SqlClient.SqlClient | Retention>) =>
  Effect.runPromise(effect.pipe(
    Effect.provide(Retention.Default.pipe(
      Layer.provideMerge(Database.layer({ filename: agentPaths(dir).dbFile })),
      Layer.provideMerge(Layer.succeed(AgentConfig, loaded(dir))),
      Layer.provideMerge(NodeContext.layer)
    )),
    Effect.scoped,
    Effect.orDie
  ))

/** A template agent folder whose kern.db holds the events; each sample works on a copy of it. */
const makeTemplate = async () => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-bench-retention-"))
  const now = Date.now()
  await withDb(dir, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const detail = JSON.stringify({ args: { command: "ls -la src/".padEnd(120, " ") }, outputBytes: 1234, note: "x".repeat(40) })
    yield* sql.unsafe(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO kernel_events (ts_ms, decision_key, run_id, trace_id, session_id, tool_id, args_digest, status, latency_ms, detail)
       SELECT CASE WHEN i <= ? THEN ? + i ELSE ? + i END, 'kernel.tool.call', 'run_' || (i / 20), 'trace_' || (i / 20),
         'session-1', 'bash', 'sha256:' || hex(randomblob(16)), 'ok', 12.5, ?
       FROM n`,
      [total, old, now - 200 * day, now - 10 * day, detail]
    )
    yield* sql`PRAGMA wal_checkpoint(TRUNCATE)`
  }))
  return dir
}

const copyOf = (template: string) => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-bench-retention-"))
  NodeFs.mkdirSync(NodePath.join(dir, ".kern"), { recursive: true })
  NodeFs.copyFileSync(agentPaths(template).dbFile, agentPaths(dir).dbFile)
  return dir
}

const fileBytes = (dir: string) => NodeFs.statSync(agentPaths(dir).dbFile).size

/** The longest gap between two turns of the event loop while `work` runs. */
const longestBlock = async <A>(work: () => Promise<A>) => {
  let last = performance.now()
  let longest = 0
  const timer = setInterval(() => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
  }, 1)
  try {
    const result = await work()
    return { result, longest }
  } finally {
    clearInterval(timer)
  }
}

const gcEvents = (rounds: number) => async () => {
  const template = await makeTemplate()
  const samples: Array<number> = []
  const baseline: Array<number> = []
  const extra: Record<string, number> = {}
  try {
    for (let round = 0; round < rounds; round++) {
      const dir = copyOf(template)
      const floorDir = copyOf(template)
      try {
        // The floor: one statement deleting the same rows.
        await withDb(floorDir, Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const start = performance.now()
          yield* sql`DELETE FROM kernel_events WHERE event_id <= ${old}`
          baseline.push(performance.now() - start)
        }))
        const before = fileBytes(dir)
        const accuracy = await withDb(dir, Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ bytes: number }>`SELECT sum(pgsize) AS bytes FROM dbstat
            WHERE name IN ('kernel_events', 'kernel_events_run', 'kernel_events_tool')`
          return rows[0]?.bytes ?? 0
        }))
        const { longest, result: report } = await longestBlock(() =>
          withDb(dir, Effect.flatMap(Retention, (retention) => retention.run({ dryRun: false, vacuum: false })))
        )
        samples.push(report.tookMs)
        const vacuumed = await withDb(dir, Effect.flatMap(Retention, (retention) => retention.run({ dryRun: false, vacuum: true })))
        if (report.events.pruned.count !== old) throw new Error(`expected ${old} events pruned, got ${report.events.pruned.count}`)
        extra.eventsPruned = report.events.pruned.count
        extra.freedEstimateMb = report.events.pruned.bytes / 1_048_576
        extra.estimateOfDbstat = (report.events.pruned.bytes + report.events.kept.bytes) / accuracy
        extra.fileBeforeMb = before / 1_048_576
        extra.fileAfterVacuumMb = fileBytes(dir) / 1_048_576
        extra.freedByVacuumMb = (before - fileBytes(dir)) / 1_048_576
        extra.vacuumMs = vacuumed.database.vacuumed?.tookMs ?? -1
        extra.longestBlockMs = Math.max(extra.longestBlockMs ?? 0, longest)
      } finally {
        NodeFs.rmSync(dir, { recursive: true, force: true })
        NodeFs.rmSync(floorDir, { recursive: true, force: true })
      }
    }
    return { samples, baseline, extra }
  } finally {
    NodeFs.rmSync(template, { recursive: true, force: true })
  }
}

export const benches: ReadonlyArray<Bench> = [
  {
    name: "retention.gc.events.1m",
    unit: "ms to prune 900k of 1M events in batches (baseline: one DELETE of the same rows)",
    run: gcEvents(3)
  }
]
