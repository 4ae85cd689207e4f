import { Schema } from "effect"

const PositiveInt = Schema.Int.pipe(Schema.positive()).annotations({ identifier: "a positive integer" })

export const jobsDefaults = { maxConcurrent: 4, maxOutputBytes: 1_048_576, maxLifetimeMs: 3_600_000 } as const

/**
 * `jobs`: the limits of background bash commands (`bash` with `background: true`). A start beyond `maxConcurrent`
 * running jobs is refused; output past `maxOutputBytes` is dropped with a marker; a job running longer than
 * `maxLifetimeMs` is killed and reported as such.
 */
export const JobsConfig = Schema.Struct({
  maxConcurrent: Schema.optionalWith(PositiveInt, { default: () => jobsDefaults.maxConcurrent }),
  maxOutputBytes: Schema.optionalWith(PositiveInt, { default: () => jobsDefaults.maxOutputBytes }),
  maxLifetimeMs: Schema.optionalWith(PositiveInt, { default: () => jobsDefaults.maxLifetimeMs })
})
export type JobsConfig = typeof JobsConfig.Type

export const jobsExpectation = "an object { maxConcurrent?, maxOutputBytes?, maxLifetimeMs? } of positive integers " +
  "(running background jobs at once, default 4; bytes of output kept per job, default 1048576; milliseconds before " +
  "a job is killed, default 3600000)"
