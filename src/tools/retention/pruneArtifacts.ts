import { FileSystem, Path } from "@effect/platform"
import { type SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { RetentionLimits } from "../../config/retention.js"
import { yieldToEventLoop } from "../../config/eventLoop.js"
import { dayMs } from "./pruneEvents.js"
import type { Freed } from "./RetentionReport.js"

/**
 * An artifact used this recently is never pruned, whatever the limits: the turn that just compacted an output may ask
 * for it in its next step. A file without a row is left alone this long too: `put` writes the file before its row.
 */
export const artifactGraceMs = 3_600_000

/** Rows marked pruned per transaction. */
const artifactBatch = 500

const LiveRow = Schema.Struct({ artifactId: Schema.String, sha256: Schema.String, bytes: Schema.Number, lastUsedAtMs: Schema.Number })

/** `<sha256>.txt`, and what an interrupted atomic write of one leaves (`.<sha256>.txt.<suffix>.kern-tmp`). */
const artifactFile = /^[0-9a-f]{64}\.txt$/
const interruptedWrite = /^\.[0-9a-f]{64}\.txt\..+\.kern-tmp$/

/**
 * Prunes `.kern/artifacts/` and its index: the least recently used first, while they are older than `maxAgeDays` or
 * the artifacts are over `maxBytes`, never one used within the last hour. Each batch is marked pruned in kern.db first
 * (the row stays, so reopening one says it was pruned), then its files are removed. A crash between the two, or one
 * between `put`'s file and its row, leaves what the next run repairs: a file whose row is pruned or absent is removed,
 * a live row whose file is gone is marked pruned (`missing`).
 */
export const pruneArtifacts = (sql: SqlClient.SqlClient, artifactsDir: string, limits: RetentionLimits, nowMs: number, dryRun: boolean) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const live = yield* SqlSchema.findAll({
      Request: Schema.Void,
      Result: LiveRow,
      execute: () =>
        sql`SELECT artifact_id, sha256, bytes, last_used_at_ms FROM tool_artifacts WHERE pruned_at_ms IS NULL
          ORDER BY last_used_at_ms, artifact_id`
    })(undefined)
    const names = (yield* fs.exists(artifactsDir)) ? yield* fs.readDirectory(artifactsDir) : []
    const onDisk = new Set(names)

    // A file not indexed as live (its row pruned, or none): left by a crash of a prune or of a `put`.
    const liveShas = new Set(live.map((row) => row.sha256))
    let stray: Freed = { count: 0, bytes: 0 }
    for (const name of names) {
      const sha = artifactFile.test(name) ? name.slice(0, 64) : interruptedWrite.test(name) ? name.slice(1, 65) : undefined
      if (sha === undefined || (liveShas.has(sha) && artifactFile.test(name))) continue
      const file = path.join(artifactsDir, name)
      const info = yield* fs.stat(file).pipe(Effect.option)
      if (Option.isNone(info)) continue
      const mtimeMs = Option.getOrElse(Option.map(info.value.mtime, (date) => date.getTime()), () => 0)
      // A file written within the grace may be `put` bringing a pruned artifact back, its row not yet updated.
      if (nowMs - mtimeMs < artifactGraceMs) continue
      if (!dryRun) yield* fs.remove(file, { force: true })
      stray = { count: stray.count + 1, bytes: stray.bytes + Number(info.value.size) }
    }

    const missing = live.filter((row) => !onDisk.has(`${row.sha256}.txt`))
    const present = live.filter((row) => onDisk.has(`${row.sha256}.txt`))
    const total = present.reduce((sum, row) => sum + row.bytes, 0)
    const cutoffMs = limits.maxAgeDays === null ? -Infinity : nowMs - limits.maxAgeDays * dayMs
    let excess = limits.maxBytes === null ? 0 : total - limits.maxBytes
    const chosen: Array<typeof LiveRow.Type> = []
    for (const row of present) {
      if (row.lastUsedAtMs > nowMs - artifactGraceMs) break
      if (row.lastUsedAtMs >= cutoffMs && excess <= 0) break
      chosen.push(row)
      excess -= row.bytes
    }

    let pruned: Freed = { count: 0, bytes: 0 }
    const protectFromMs = nowMs - artifactGraceMs
    for (const rows of chunks([...missing, ...chosen], artifactBatch)) {
      const isMissing = (row: typeof LiveRow.Type) => !onDisk.has(`${row.sha256}.txt`)
      if (dryRun) {
        const gone = rows.filter((row) => !isMissing(row))
        pruned = { count: pruned.count + gone.length, bytes: pruned.bytes + gone.reduce((sum, row) => sum + row.bytes, 0) }
        continue
      }
      // Only rows still as they were read: one used again meanwhile (last_used_at_ms moved) stays.
      const marked = yield* SqlSchema.findAll({
        Request: Schema.Void,
        Result: Schema.Struct({ artifactId: Schema.String }),
        execute: () =>
          sql`UPDATE tool_artifacts SET pruned_at_ms = ${nowMs}
            WHERE pruned_at_ms IS NULL AND (
              artifact_id IN ${sql.in(["", ...rows.filter(isMissing).map((row) => row.artifactId)])} OR (
                artifact_id IN ${sql.in(["", ...rows.filter((row) => !isMissing(row)).map((row) => row.artifactId)])}
                AND last_used_at_ms < ${protectFromMs}))
            RETURNING artifact_id`
      })(undefined)
      const markedIds = new Set(marked.map((row) => row.artifactId))
      for (const row of rows) {
        if (!markedIds.has(row.artifactId) || isMissing(row)) continue
        yield* fs.remove(path.join(artifactsDir, `${row.sha256}.txt`), { force: true })
        pruned = { count: pruned.count + 1, bytes: pruned.bytes + row.bytes }
      }
      yield* yieldToEventLoop
    }
    const keptRows = present.length - chosen.length
    return {
      pruned,
      missing: missing.length,
      stray,
      kept: { count: keptRows, bytes: total - chosen.reduce((sum, row) => sum + row.bytes, 0) }
    }
  }).pipe(Effect.withSpan("kern.retention.artifacts", { attributes: { dryRun } }))

const chunks = <A>(items: ReadonlyArray<A>, size: number): ReadonlyArray<ReadonlyArray<A>> =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size))
