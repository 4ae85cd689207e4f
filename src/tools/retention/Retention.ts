import { FileSystem, Path } from "@effect/platform"
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { AgentConfig } from "../../config/AgentConfig.js"
import { spendZone } from "../../model/spendCaps.js"
import { dialectOf } from "../../storage/sqlDialect.js"
import { pruneArtifacts } from "./pruneArtifacts.js"
import { pruneCounts } from "./pruneCounts.js"
import { pruneEvents } from "./pruneEvents.js"
import { pruneMedia } from "./pruneMedia.js"
import type { RetentionReport } from "./RetentionReport.js"

export class RetentionError extends Schema.TaggedError<RetentionError>()("RetentionError", {
  message: Schema.String
}) {}

export interface RetentionRun {
  /** Say what would be freed and change nothing. */
  readonly dryRun: boolean
  /**
   * Whether kern.db may be vacuumed afterwards (it holds the write lock throughout: only when no agent runs). It is
   * vacuumed when at least a tenth of it is free pages.
   */
  readonly vacuum: boolean
}

/** Why kern.db on PostgreSQL is never vacuumed by kern (the report's `notVacuumed`). */
export const postgresNotVacuumed =
  "it is on PostgreSQL, whose autovacuum reuses the space of deleted rows; VACUUM FULL by the server's administrator gives it back to the disk"

/** kern.db is vacuumed when at least this share of it is free pages (below that, new rows reuse them soon enough). */
export const vacuumShare = 0.1

const PageCount = Schema.Struct({ pages: Schema.Number, free: Schema.Number, pageSize: Schema.Number })
const StateRow = Schema.Struct({ lastRunAtMs: Schema.Number })

/**
 * Retention of what kern.db, `.kern/artifacts/` and `.kern/media/` gather (config `retention`): artifacts, media files
 * no session refers to, the event log and count records, each by age and by total size, applied by `kern gc` and by the running agent once a day. Sessions and
 * memory are never touched. Each kind is pruned in short batches, so the agent's turns write between them.
 */
export class Retention extends Effect.Service<Retention>()("kern/tools/Retention", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const { config, paths } = yield* AgentConfig
    const zone = spendZone(config.timezone)
    // VACUUM is SQLite's here: PostgreSQL's autovacuum makes deleted rows' space reusable as the agent runs.
    const onPostgres = dialectOf(sql) === "pg"
    const fail = (what: string) => (error: { readonly message: string }) =>
      new RetentionError({ message: `could not ${what}: ${error.message}` })

    const pages = SqlSchema.single({
      Request: Schema.Void,
      Result: PageCount,
      // PostgreSQL: the bytes of the agent's schema as one page, none free (its autovacuum reuses what is deleted).
      execute: () =>
        sql.onDialectOrElse({
          pg: () =>
            sql`SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS pages, 0 AS free, 1 AS page_size
              FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`,
          orElse: () =>
            sql`SELECT (SELECT page_count FROM pragma_page_count()) AS pages, (SELECT freelist_count FROM pragma_freelist_count()) AS free,
              (SELECT page_size FROM pragma_page_size()) AS page_size`
        })
    })(undefined).pipe(Effect.mapError(fail("read kern.db's size")))

    const vacuum = Effect.gen(function*() {
      const before = yield* pages
      const start = yield* Clock.currentTimeMillis
      yield* sql`VACUUM`
      // VACUUM rewrites the database through the WAL: checkpoint it and cut it back, or the space moves to kern.db-wal.
      yield* sql`PRAGMA wal_checkpoint(TRUNCATE)`
      const after = yield* pages
      return {
        beforeBytes: before.pages * before.pageSize,
        afterBytes: after.pages * after.pageSize,
        tookMs: (yield* Clock.currentTimeMillis) - start
      }
    }).pipe(Effect.mapError(fail("vacuum kern.db")), Effect.withSpan("kern.retention.vacuum"))

    /** Applies retention once (or, dry, says what it would free) and records the run in kern.db. */
    const run = (options: RetentionRun) =>
      Effect.gen(function*() {
        const nowMs = yield* Clock.currentTimeMillis
        const limits = config.retention
        const artifacts = yield* pruneArtifacts(sql, paths.artifactsDir, limits.artifacts, nowMs, options.dryRun).pipe(
          Effect.provideService(FileSystem.FileSystem, fs),
          Effect.provideService(Path.Path, path),
          Effect.mapError(fail("prune the artifacts"))
        )
        const media = yield* pruneMedia(sql, paths, limits.media, nowMs, options.dryRun).pipe(
          Effect.provideService(FileSystem.FileSystem, fs),
          Effect.provideService(Path.Path, path),
          Effect.mapError(fail("prune the media files"))
        )
        const events = yield* pruneEvents(sql, limits.events, nowMs, options.dryRun).pipe(Effect.mapError(fail("prune the event log")))
        const counts = yield* pruneCounts(sql, limits.counts, nowMs, zone, options.dryRun).pipe(
          Effect.mapError(fail("prune the count records"))
        )
        const size = yield* pages
        const fileBytes = size.pages * size.pageSize
        const freeBytes = size.free * size.pageSize
        const worthIt = !onPostgres && freeBytes > 0 && freeBytes >= fileBytes * vacuumShare
        const vacuumed = !options.dryRun && options.vacuum && worthIt ? yield* vacuum : undefined
        const notVacuumed = vacuumed !== undefined
          ? undefined
          : options.dryRun
          ? "dry run"
          : onPostgres
          ? postgresNotVacuumed
          : !worthIt
          ? `less than ${vacuumShare * 100}% of it is free; new rows reuse that space`
          : !options.vacuum
          ? "the agent is running; new rows reuse the free space, or stop the agent and run kern gc"
          : undefined
        const report: RetentionReport = {
          dryRun: options.dryRun,
          atMs: nowMs,
          artifacts,
          media,
          events,
          counts,
          database: {
            fileBytes: vacuumed?.afterBytes ?? fileBytes,
            freeBytes: vacuumed === undefined ? freeBytes : 0,
            ...(vacuumed === undefined ? {} : { vacuumed }),
            ...(notVacuumed === undefined ? {} : { notVacuumed })
          },
          tookMs: (yield* Clock.currentTimeMillis) - nowMs
        }
        if (!options.dryRun) {
          yield* sql`INSERT INTO retention_state (id, last_run_at_ms, report)
            VALUES (1, ${nowMs}, ${JSON.stringify(report)})
            ON CONFLICT (id) DO UPDATE SET last_run_at_ms = excluded.last_run_at_ms, report = excluded.report`.pipe(
            Effect.mapError(fail("record the run"))
          )
        }
        return report
      }).pipe(Effect.withSpan("kern.retention.run", { attributes: { dryRun: options.dryRun } }))

    /** When retention last ran (not a dry run: `kern gc` or the agent's daily job); none before the first run. */
    const lastRunAtMs = SqlSchema.findOne({
      Request: Schema.Void,
      Result: StateRow,
      execute: () => sql`SELECT last_run_at_ms FROM retention_state WHERE id = 1`
    })(undefined).pipe(Effect.map(Option.map((row) => row.lastRunAtMs)), Effect.mapError(fail("read when retention last ran")))

    return { run, lastRunAtMs } as const
  })
}) {}
