import { Effect, Layer } from "effect"
import { ContextWindow } from "../context/ContextWindow.js"
import { AgentRuntime } from "./AgentRuntime.js"
import { featureLogged } from "./featureLog.js"

/**
 * The context's background catch-up, for as long as the layer lives: the summaries of sessions far behind their raw
 * window (a long session kern never summarized, an outage's backlog), built after their turns have answered.
 * Interrupted when the layer closes; what it wrote stays in kern.db and the next long-lived agent continues.
 */
export const worker = Layer.scopedDiscard(Effect.gen(function*() {
  const context = yield* ContextWindow
  yield* Effect.forkScoped(context.catchUp).pipe(featureLogged("context-catch-up"))
}))

/** The running agent's catch-up: the worker, with the current session's backlog (an earlier process's) resumed at start. */
export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const context = yield* ContextWindow
  const agent = yield* AgentRuntime
  const session = yield* agent.currentSession
  yield* context.resume(session.id, session.history)
})).pipe(Layer.provideMerge(worker))
