import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Layer, Ref } from "effect"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import { MessageQueue } from "../../src/turn/MessageQueue.js"
import type { TurnEvent } from "../../src/turn/TurnEvent.js"
import { TurnRunner } from "../../src/turn/TurnRunner.js"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { ContextWindow } from "../../src/context/ContextWindow.js"

/** The agent's runtime on `dir`, in this process, with only an OpenAI key in its environment. */
export const testRuntime = (dir: string) =>
  agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 }).pipe(
    Layer.provide(Layer.succeed(ProcessEnv, { OPENAI_API_KEY: "sk-test" })),
    Layer.provide(NodeContext.layer)
  )

/**
 * One operator turn on the active session, as the runtime runs it from its queue, with its background context work
 * awaited (the catch-up of summaries far behind too, as a long-lived agent's worker does it; `oneShot`: not, as
 * `kern chat` leaves it): the turn's outcome and events, the session, where its history was loaded from and its size
 * after the turn.
 */
export const operatorTurn = (text: string, options: { readonly oneShot?: boolean } = {}) =>
  Effect.scoped(Effect.gen(function*() {
    const queue = yield* MessageQueue
    const runner = yield* TurnRunner
    const context = yield* ContextWindow
    const { session } = yield* openActiveSession()
    const loadedFrom = yield* session.history.first
    yield* queue.offer({ interface: "cli", channel: "terminal", userId: "operator", text })
    const message = yield* queue.next
    const events = yield* Ref.make<ReadonlyArray<TurnEvent>>([])
    const outcome = yield* runner.run({ message, session, emit: (event) => Ref.update(events, (all) => [...all, event]) })
    yield* queue.endTurn("main")
    yield* context.settled()
    if (options.oneShot !== true) yield* context.catchUpQueued
    return { outcome, events: yield* Ref.get(events), loadedFrom, sessionId: session.id, messages: yield* session.history.size }
  }))
