import { Effect, Layer } from "effect"
import { featureLogged } from "./featureLog.js"
import { HeartbeatSchedule } from "./HeartbeatSchedule.js"

/**
 * The running agent's heartbeat, ticking from when this layer is built until its scope closes: no tick after that
 * (the due time in kern.db is cleared as it stops, HeartbeatSchedule.run).
 */
export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const heartbeat = yield* HeartbeatSchedule
  yield* Effect.forkScoped(heartbeat.run)
}).pipe(featureLogged("heartbeat")))
