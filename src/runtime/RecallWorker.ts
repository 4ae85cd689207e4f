import { Effect, Layer, Queue } from "effect"
import { Recall } from "../recall/Recall.js"
import { AgentRuntime } from "./AgentRuntime.js"
import { featureLogged } from "./featureLog.js"

/** A pass that fails (kern.db unreadable, say) is logged; the worker waits for the next turn to try again. */
const logged = <A, E extends { readonly message: string }>(effect: Effect.Effect<A, E>) =>
  Effect.catchAll(effect, (error) => Effect.logWarning(`kern: recall indexing failed: ${error.message}`))

/**
 * The running agent's indexer, in the background: a backfill of every session and file at start-up, then a pass
 * after each turn. Turns never wait for it: finished turns only signal, and signals that arrive during a pass
 * fold into one next pass (a pass reads everything new).
 */
export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const recall = yield* Recall
  if (!recall.enabled) return
  const agent = yield* AgentRuntime
  const turns = yield* agent.events.subscribe
  const work = Effect.gen(function*() {
    yield* logged(recall.backfill)
    for (;;) {
      const first = yield* Queue.take(turns)
      const rest = yield* Queue.takeAll(turns)
      const done = first.type === "finish" || [...rest].some((e) => e.type === "finish")
      if (done) yield* logged(recall.sync)
    }
  })
  yield* Effect.forkScoped(work.pipe(Effect.withSpan("kern.recall.worker"))).pipe(featureLogged("recall-worker"))
}))
