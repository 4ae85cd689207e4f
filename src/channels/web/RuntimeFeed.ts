import { Effect, Layer, Stream } from "effect"
import type { AgentRuntime } from "../../runtime/AgentRuntime.js"
import type { SpendGuard } from "../../model/SpendGuard.js"
import type { Approvals } from "../../runtime/Approvals.js"
import type { Channels } from "../../tools/Channels.js"
import type { Questions } from "../../tools/Questions.js"
import { agentFeed } from "../agentFeed.js"
import { EventHub } from "./EventHub.js"

/**
 * Feeds the hub from the running agent: its events as they are made (agentFeed.ts), numbered by the hub. Subscribed
 * when the layer is built, before the runtime serves a turn.
 */
export const layer: Layer.Layer<never, never, EventHub | AgentRuntime | Approvals | Questions | Channels | SpendGuard> = Layer.scopedDiscard(Effect.gen(function*() {
  const hub = yield* EventHub
  const events = yield* agentFeed
  yield* Effect.forkScoped(Stream.runForEach(events, hub.publish))
}))
