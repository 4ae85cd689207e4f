import { type Duration, Effect, type Option } from "effect"

/**
 * `effect`'s result if it ends within `limit`, else none, with `effect` interrupted. Also where interruption is off,
 * as in a finalizer: `Effect.timeout` there interrupts nothing, so it waits for `effect` to end by itself, however
 * long that takes (a one-shot chat's "30 s at most" on its way out waited for every background summary). Only for an
 * effect that may be cut anywhere: a wait, or work whose writes are transactions.
 */
export const waitAtMost = <A, E, R>(effect: Effect.Effect<A, E, R>, limit: Duration.DurationInput): Effect.Effect<Option.Option<A>, E, R> =>
  Effect.timeoutOption(Effect.interruptible(effect), limit)
