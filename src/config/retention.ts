import { Schema } from "effect"

const PositiveInt = Schema.Int.pipe(Schema.positive()).annotations({ identifier: "a positive integer" })

/** A limit of retention: a positive integer, or null for none. */
const Limit = Schema.NullOr(PositiveInt)

const mib = 1_048_576

/**
 * The defaults: artifacts (full tool outputs) a month and 1 GiB, the event log (the kernel's audit) 90 days and
 * 256 MiB, count records (the spend ledger's days, the per-session context counters) 400 days and 64 MiB, media files
 * no session refers to a month and 1 GiB (a file a session line refers to is never pruned: pruneMedia.ts).
 */
export const retentionDefaults = {
  artifacts: { maxAgeDays: 30, maxBytes: 1024 * mib },
  media: { maxAgeDays: 30, maxBytes: 1024 * mib },
  events: { maxAgeDays: 90, maxBytes: 256 * mib },
  counts: { maxAgeDays: 400, maxBytes: 64 * mib }
} as const

const kindOf = (defaults: { readonly maxAgeDays: number; readonly maxBytes: number }) =>
  Schema.Struct({
    maxAgeDays: Schema.optionalWith(Limit, { default: () => defaults.maxAgeDays }),
    maxBytes: Schema.optionalWith(Limit, { default: () => defaults.maxBytes })
  })

/** One kind's limits: older than `maxAgeDays` goes, then the oldest until the kind is within `maxBytes`; null: no limit. */
export interface RetentionLimits {
  readonly maxAgeDays: number | null
  readonly maxBytes: number | null
}

/**
 * `retention`: how much of what kern.db and `.kern/artifacts/` gather is kept, applied once a day by the running agent
 * and at once by `kern gc`. Sessions and memory are never pruned by it.
 */
export const RetentionConfig = Schema.Struct({
  artifacts: Schema.optionalWith(kindOf(retentionDefaults.artifacts), { default: () => retentionDefaults.artifacts }),
  events: Schema.optionalWith(kindOf(retentionDefaults.events), { default: () => retentionDefaults.events }),
  counts: Schema.optionalWith(kindOf(retentionDefaults.counts), { default: () => retentionDefaults.counts }),
  media: Schema.optionalWith(kindOf(retentionDefaults.media), { default: () => retentionDefaults.media })
})
export type RetentionConfig = typeof RetentionConfig.Type

export const retentionExpectation = "an object { artifacts?, events?, counts?, media? }, each { maxAgeDays?, maxBytes? }: a " +
  "positive integer or null for no limit (defaults: artifacts 30 days and 1073741824 bytes, events 90 days and " +
  "268435456 bytes, counts 400 days and 67108864 bytes, media 30 days and 1073741824 bytes)"
