import { Effect, type Scope } from "effect"

/**
 * A feature layer's start and stop, logged at debug and annotated with its name (as turnLog.ts annotates a turn's
 * lines with its turn): `started` once its work is forked, `stopped` once the layer's scope has stopped that work
 * (the finalizer is added first, so it runs after the work's own).
 */
export const featureLogged = (feature: string) =>
<A, E, R>(start: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | Scope.Scope> =>
  Effect.zipRight(
    Effect.addFinalizer(() => Effect.logDebug(`${feature} stopped`).pipe(Effect.annotateLogs({ feature }))),
    Effect.tap(start, () => Effect.logDebug(`${feature} started`).pipe(Effect.annotateLogs({ feature })))
  )
