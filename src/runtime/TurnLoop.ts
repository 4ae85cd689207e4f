import { Cause, Effect, Layer } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import { AgentRuntime } from "./AgentRuntime.js"
import { featureLogged } from "./featureLog.js"

/**
 * Serving the queue: the running agent's turns, from when this layer is built until its scope closes, by
 * `maxConcurrentTurns` servers side by side (the queue gives each a conversation no other is serving, so one
 * conversation's turns still run one after another; tools that write the workspace take the write lock). Closing
 * interrupts the turns that run (a restart answers their messages: they are still in the inbox); the sessions close
 * after, with the runtime's scope, which this layer's is inside.
 */
export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const runtime = yield* AgentRuntime
  const { config } = yield* AgentConfig
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
  // With one conversation for everybody, turns cannot overlap: one server is all there is work for.
  const servers = config.conversations === "shared" ? 1 : config.maxConcurrentTurns
  for (let i = 0; i < servers; i++) yield* Effect.forkScoped(Effect.forever(step))
}).pipe(featureLogged("turn-loop")))
