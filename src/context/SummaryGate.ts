import { Clock, Duration, Effect, Option, SynchronizedRef } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import * as KnownSecrets from "../config/KnownSecrets.js"
import { SegmentStore } from "./SegmentStore.js"
import {
  type Admission,
  admission as admissionOf,
  afterFailure,
  afterSuccess,
  backoffDelay,
  healthOf,
  shortError,
  type SummarizerHealth,
  summarizerOf,
  withoutWait
} from "./summarizerHealth.js"

/** A success is written to kern.db at most this often (a failure or a recovery at once): a pass writes many. */
const successWriteEvery = Duration.minutes(1)

/**
 * The one door every summary call goes through: it says whether a call may be made now (not while a failing
 * summary model waits out its backoff), and learns from each outcome. Its state is kept in kern.db, so a restart
 * neither hammers a failing model at once nor forgets when summaries last worked.
 */
export class SummaryGate extends Effect.Service<SummaryGate>()("kern/context/SummaryGate", {
  effect: Effect.gen(function*() {
    const loaded = yield* AgentConfig
    const store = yield* SegmentStore
    const { secrets } = KnownSecrets.fromConfig(loaded)
    const warned = (error: { readonly message: string }) => Effect.logWarning(`kern: context: ${error.message}`)
    const stored = yield* store.getHealth.pipe(
      Effect.catchAll((error) => Effect.as(warned(error), Option.none<SummarizerHealth>()))
    )
    const initial = healthOf(stored, summarizerOf(loaded.config))
    const state = yield* SynchronizedRef.make(initial)
    const written = yield* SynchronizedRef.make(initial.lastSuccessAtMs ?? 0)

    const persist = (health: SummarizerHealth) => store.setHealth(health).pipe(Effect.catchAll(warned))

    /** Whether a summary may be asked for now. */
    const admission: Effect.Effect<Admission> = Effect.zipWith(SynchronizedRef.get(state), Clock.currentTimeMillis, admissionOf)

    const succeeded = SynchronizedRef.updateEffect(state, (health) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const next = afterSuccess(health, now)
        const last = yield* SynchronizedRef.get(written)
        if (health.consecutiveFailures > 0 || now - last >= Duration.toMillis(successWriteEvery)) {
          yield* persist(next)
          yield* SynchronizedRef.set(written, now)
        }
        if (health.consecutiveFailures > 0) {
          yield* Effect.logInfo(
            `kern: the summary model answered again after ${health.consecutiveFailures} failed attempt` +
              `${health.consecutiveFailures === 1 ? "" : "s"}: summaries catch up`
          )
        }
        return next
      }))

    const failed = (message: string) =>
      SynchronizedRef.updateEffect(state, (health) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const next = afterFailure(health, now, shortError(message, secrets))
          yield* persist(next)
          if (next.consecutiveFailures > health.consecutiveFailures) {
            yield* Effect.logWarning(
              `kern: summaries failed (${next.consecutiveFailures} in a row): ${next.lastError}; no summary is asked ` +
                `for during the next ${Duration.format(backoffDelay(next.consecutiveFailures))}, and a conversation ` +
                "that outgrows the window meanwhile is cut at user messages (recall still finds the rest)"
            )
          }
          return next
        }))

    /** The next summary asked for is tried now, whatever the wait: the operator asked for summaries. */
    const retryNow = SynchronizedRef.updateEffect(state, (health) =>
      Effect.map(Clock.currentTimeMillis, (now) => withoutWait(health, now)))

    return { admission, succeeded, failed, retryNow, health: SynchronizedRef.get(state) } as const
  })
}) {}
