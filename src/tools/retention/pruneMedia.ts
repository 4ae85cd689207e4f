import { FileSystem, Path } from "@effect/platform"
import { type SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { RetentionLimits } from "../../config/retention.js"
import { yieldToEventLoop } from "../../config/eventLoop.js"
import { dayMs } from "./pruneEvents.js"
import type { Freed } from "./RetentionReport.js"

/**
 * A file stored this recently is never pruned: its message may be queued, or its turn running, with no line yet.
 */
export const mediaGraceMs = 3_600_000

/** Rows marked pruned per transaction. */
const mediaBatch = 500

const LiveRow = Schema.Struct({ mediaId: Schema.String, sha256: Schema.String, bytes: Schema.Number, createdAtMs: Schema.Number })
const InboxRow = Schema.Struct({ attachments: Schema.String })

const mediaIdPattern = /med_[0-9a-f]{24}/g

/**
 * The media ids something kern keeps still refers to: every session line (a message's attachments, a message tool's
 * result), and the inbox's messages not yet answered. Sessions are never pruned, so what they refer to stays.
 */
const referencedIds = (sql: SqlClient.SqlClient, sessionsDir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const ids = new Set<string>()
    const collect = (text: string) => {
      for (const match of text.matchAll(mediaIdPattern)) ids.add(match[0])
    }
    const names = (yield* fs.exists(sessionsDir)) ? yield* fs.readDirectory(sessionsDir) : []
    for (const name of names.filter((name) => name.endsWith(".jsonl"))) {
      collect(yield* fs.readFileString(path.join(sessionsDir, name)))
      yield* yieldToEventLoop
    }
    const inbox = yield* SqlSchema.findAll({
      Request: Schema.Void,
      Result: InboxRow,
      execute: () => sql`SELECT attachments FROM inbox WHERE attachments IS NOT NULL`
    })(undefined)
    for (const row of inbox) collect(row.attachments)
    return ids
  })

/**
 * Prunes `.kern/media/` (config `retention.media`): of the files no session line and no waiting message refers to,
 * those stored more than `maxAgeDays` ago, then the oldest while all stored files are over `maxBytes`; never one
 * stored within the last hour. A file a session refers to is kept whatever the limits: the conversation it came in
 * still shows it (and the model may be shown it again). Each batch is marked pruned in kern.db first (the row stays,
 * so asking for the file says it was pruned, and when), then its files are removed.
 */
export const pruneMedia = (
  sql: SqlClient.SqlClient,
  dirs: { readonly mediaDir: string; readonly sessionsDir: string },
  limits: RetentionLimits,
  nowMs: number,
  dryRun: boolean
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const live = yield* SqlSchema.findAll({
      Request: Schema.Void,
      Result: LiveRow,
      execute: () => sql`SELECT media_id, sha256, bytes, created_at_ms FROM media WHERE pruned_at_ms IS NULL ORDER BY created_at_ms, media_id`
    })(undefined)
    const referenced = yield* referencedIds(sql, dirs.sessionsDir)
    const total = live.reduce((sum, row) => sum + row.bytes, 0)
    const cutoffMs = limits.maxAgeDays === null ? -Infinity : nowMs - limits.maxAgeDays * dayMs
    let excess = limits.maxBytes === null ? 0 : total - limits.maxBytes
    const chosen: Array<typeof LiveRow.Type> = []
    let kept: Freed = { count: 0, bytes: 0 }
    for (const row of live) {
      const prunable = !referenced.has(row.mediaId) && row.createdAtMs <= nowMs - mediaGraceMs &&
        (row.createdAtMs < cutoffMs || excess > 0)
      if (!prunable) {
        kept = { count: kept.count + 1, bytes: kept.bytes + row.bytes }
        continue
      }
      chosen.push(row)
      excess -= row.bytes
    }
    const referencedKept = live.filter((row) => referenced.has(row.mediaId))
    let pruned: Freed = { count: 0, bytes: 0 }
    for (const rows of chunks(chosen, mediaBatch)) {
      if (dryRun) {
        pruned = { count: pruned.count + rows.length, bytes: pruned.bytes + rows.reduce((sum, row) => sum + row.bytes, 0) }
        continue
      }
      // Only rows still live: a file stored again meanwhile has had its row brought back, and is not taken.
      const marked = yield* SqlSchema.findAll({
        Request: Schema.Void,
        Result: Schema.Struct({ mediaId: Schema.String }),
        execute: () =>
          sql`UPDATE media SET pruned_at_ms = ${nowMs}
            WHERE pruned_at_ms IS NULL AND media_id IN ${sql.in(rows.map((row) => row.mediaId))}
            RETURNING media_id`
      })(undefined)
      const markedIds = new Set(marked.map((row) => row.mediaId))
      for (const row of rows) {
        if (!markedIds.has(row.mediaId)) continue
        yield* fs.remove(path.join(dirs.mediaDir, row.sha256), { force: true })
        pruned = { count: pruned.count + 1, bytes: pruned.bytes + row.bytes }
      }
      yield* yieldToEventLoop
    }
    return {
      pruned,
      kept,
      referenced: { count: referencedKept.length, bytes: referencedKept.reduce((sum, row) => sum + row.bytes, 0) }
    }
  }).pipe(Effect.withSpan("kern.retention.media", { attributes: { dryRun } }))

const chunks = <A>(items: ReadonlyArray<A>, size: number): ReadonlyArray<ReadonlyArray<A>> =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size))
