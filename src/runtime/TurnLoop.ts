import { Cause, Effect, Layer } from "effect"
import { AgentRuntime } from "./AgentRuntime.js"
import { featureLogged } from "./featureLog.js"

/**
 * Serving the queue: the running agent's turns, one after another, from when this layer is built until its scope
 * closes. Closing interrupts the turn that runs (a restart answers its message: it is still in the inbox); the
 * sessions close after, with the runtime's scope, which this layer's is inside.
 */
export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const runtime = yield* AgentRuntime
  // A turn's failure is a value (runTurn); a defect (a bug) is logged and the loop goes on with the next message
  // rather than leave a running agent that no longer answers, a second later: a defect that recurs at once (before
  // a message is taken) must not spin the loop and flood the log.
  const step = runtime.step.pipe(
    Effect.catchAllDefect((defect) =>
      Effect.zipRight(
        Effect.logError("kern: a turn ended in a defect; serving the next message", Cause.die(defect)),
        Effect.sleep("1 second")
      )
    )
  )
  yield* Effect.forkScoped(Effect.forever(step))
}).pipe(featureLogged("turn-loop")))
