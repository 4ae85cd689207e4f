import { Clock, Duration, Effect, Layer, Option } from "effect"
import { Retention } from "../tools/retention/Retention.js"
import { reportLines } from "../tools/retention/RetentionReport.js"
import { featureLogged } from "./featureLog.js"

/** How often the running agent applies retention. */
export const retentionEvery = Duration.days(1)

/** The earliest a run comes after the agent starts: start-up work (recall's backfill, catch-up) goes first. */
export const retentionStartDelay = Duration.minutes(10)

/** After a failed run, the next try (not a day later: what it should have freed keeps growing). */
export const retentionRetry = Duration.hours(1)

/**
 * The running agent's retention (config `retention`), once a day: due a day after the last run, which kern.db keeps
 * (`retention_state`, written by `kern gc` too), so a restart does not start the day over; never sooner than
 * `retentionStartDelay` after the agent starts. A Clock-driven fiber of its own rather than an entry of the Scheduler:
 * the Scheduler's entries post turns, and this is housekeeping no turn sees. It prunes in short batches (turns write
 * between them) and never vacuums (that holds kern.db's write lock throughout: `kern gc` does it while the agent is
 * stopped). A failed run is logged and tried again an hour later.
 */
export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const retention = yield* Retention
  const startedAt = yield* Clock.currentTimeMillis
  const earliest = startedAt + Duration.toMillis(retentionStartDelay)

  const dueAt = Effect.map(
    retention.lastRunAtMs.pipe(
      Effect.catchAll((error) => Effect.as(Effect.logWarning(`kern: retention: ${error.message}`), Option.none<number>()))
    ),
    Option.match({
      onNone: () => earliest,
      onSome: (last) => Math.max(earliest, last + Duration.toMillis(retentionEvery))
    })
  )

  const once = retention.run({ dryRun: false, vacuum: false }).pipe(
    Effect.tap((report) => Effect.logInfo(`retention: ${reportLines(report).map((line) => line.trim()).join("; ")}`)),
    Effect.as(true),
    Effect.catchAll((error) => Effect.as(Effect.logWarning(`kern: retention could not run: ${error.message}; trying again in an hour`), false))
  )

  const loop = Effect.gen(function*() {
    let retryAt: number | undefined
    while (true) {
      const due = retryAt ?? (yield* dueAt)
      const now = yield* Clock.currentTimeMillis
      if (due > now) yield* Effect.sleep(Duration.millis(due - now))
      const ok = yield* once
      retryAt = ok ? undefined : (yield* Clock.currentTimeMillis) + Duration.toMillis(retentionRetry)
    }
  }).pipe(Effect.annotateLogs({ feature: "retention" }), Effect.withSpan("kern.retention.job"))
  yield* Effect.forkScoped(loop)
}).pipe(featureLogged("retention"))).pipe(Layer.provide(Retention.Default))
