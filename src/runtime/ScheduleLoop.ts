import { Effect, Layer } from "effect"
import { featureLogged } from "./featureLog.js"
import { Scheduler } from "./Scheduler.js"

/** The running agent's schedules (the heartbeat among them) firing, from when this layer is built until its scope closes. */
export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const scheduler = yield* Scheduler
  yield* Effect.forkScoped(scheduler.run)
}).pipe(featureLogged("schedules"))).pipe(Layer.provide(Scheduler.Default))
