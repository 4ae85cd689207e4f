import { Schema } from "effect"

/** What retention pruned (or, in a dry run, would prune) of one kind: rows or files, and their bytes. */
export const Freed = Schema.Struct({ count: Schema.Number, bytes: Schema.Number })
export type Freed = typeof Freed.Type

export const noneFreed: Freed = { count: 0, bytes: 0 }

export const addFreed = (a: Freed, b: Freed): Freed => ({ count: a.count + b.count, bytes: a.bytes + b.bytes })

/**
 * One run of retention. Bytes of artifacts are their files'; bytes of rows are estimated from their stored text
 * (kern.db itself shrinks only once it is vacuumed: `database`).
 */
export const RetentionReport = Schema.Struct({
  dryRun: Schema.Boolean,
  atMs: Schema.Number,
  artifacts: Schema.Struct({
    /** Artifacts past their age or beyond the size limit: files removed, rows kept as pruned. */
    pruned: Freed,
    /** Indexed artifacts whose file was already gone: marked pruned. */
    missing: Schema.Number,
    /** Files with no live row (left by a crash between a file and its row): removed. */
    stray: Freed,
    /** What is kept afterwards. */
    kept: Freed
  }),
  /** Absent in a report of a kern before media retention. */
  media: Schema.optional(Schema.Struct({
    /** Files no session line or waiting message refers to, past their age or beyond the size limit: removed, rows kept as pruned. */
    pruned: Freed,
    /** What is kept afterwards. */
    kept: Freed,
    /** Of those kept, the files a session line or a waiting message refers to (never pruned). */
    referenced: Freed
  })),
  events: Schema.Struct({ pruned: Freed, kept: Freed }),
  counts: Schema.Struct({ spendRows: Freed, contextRows: Freed, kept: Freed }),
  database: Schema.Struct({
    fileBytes: Schema.Number,
    /** Free pages inside kern.db: reused by new rows, given back to the disk by VACUUM. */
    freeBytes: Schema.Number,
    vacuumed: Schema.optional(Schema.Struct({ beforeBytes: Schema.Number, afterBytes: Schema.Number, tookMs: Schema.Number })),
    /** Why it was not vacuumed, when it was not. */
    notVacuumed: Schema.optional(Schema.String)
  }),
  tookMs: Schema.Number
})
export type RetentionReport = typeof RetentionReport.Type

const units = ["B", "KiB", "MiB", "GiB", "TiB"] as const

/** Bytes as a person reads them: `1.5 MiB`. */
export const formatBytes = (bytes: number): string => {
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`
}

const line = (what: string, freed: Freed, noun: string) => `${what}: ${freed.count} ${noun}, ${formatBytes(freed.bytes)}`

/** The report as `kern gc` prints it: what was freed per kind, what is kept, and kern.db's size. */
export const reportLines = (report: RetentionReport): ReadonlyArray<string> => {
  const verb = report.dryRun ? "would free" : "freed"
  const { artifacts, counts, database, events, media } = report
  const total = artifacts.pruned.bytes + artifacts.stray.bytes + (media?.pruned.bytes ?? 0) + events.pruned.bytes +
    counts.spendRows.bytes + counts.contextRows.bytes
  return [
    `${report.dryRun ? "dry run: nothing changed; " : ""}kern gc ${verb} ${formatBytes(total)}`,
    line(`  artifacts ${verb}`, artifacts.pruned, "files") +
    (artifacts.missing === 0 ? "" : `; ${artifacts.missing} already missing`) +
    (artifacts.stray.count === 0 ? "" : `; ${artifacts.stray.count} stray files (${formatBytes(artifacts.stray.bytes)})`),
    ...(media === undefined ? [] : [
      line(`  media ${verb}`, media.pruned, "files") +
      ` (kept: ${media.kept.count}, ${formatBytes(media.kept.bytes)}, of them ${media.referenced.count} a session refers to)`
    ]),
    line(`  events ${verb}`, events.pruned, "rows"),
    line(`  counts ${verb}`, addFreed(counts.spendRows, counts.contextRows), "rows") +
    ` (${counts.spendRows.count} spend ledger, ${counts.contextRows.count} session context counters)`,
    `  kept: artifacts ${artifacts.kept.count} (${formatBytes(artifacts.kept.bytes)}), events ${events.kept.count} ` +
    `(${formatBytes(events.kept.bytes)}), counts ${counts.kept.count} (${formatBytes(counts.kept.bytes)})`,
    database.vacuumed === undefined
      ? `  kern.db: ${formatBytes(database.fileBytes)}, ${formatBytes(database.freeBytes)} free inside it` +
        (database.notVacuumed === undefined ? "" : ` (not vacuumed: ${database.notVacuumed})`)
      : `  kern.db vacuumed: ${formatBytes(database.vacuumed.beforeBytes)} → ${formatBytes(database.vacuumed.afterBytes)} ` +
        `in ${(database.vacuumed.tookMs / 1000).toFixed(1)} s`
  ]
}
