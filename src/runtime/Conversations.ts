import { Context, Effect, Layer, Schema, type Scope } from "effect"
import type { InboxEntry } from "./Inbox.js"

/** What a conversation is handed: a message already in kern.db's inbox (its id there is its identity). */
export type Delivery = Pick<InboxEntry, "id" | "interface" | "channel" | "userId" | "text" | "attachments" | "receivedAtMs">

/** A message stored in the inbox could not be handed to its conversation; it stays in the inbox for a restart. */
export class DeliveryError extends Schema.TaggedError<DeliveryError>()("DeliveryError", {
  message: Schema.String
}) {}

/** An open door into the conversations: where accepted messages go, and the journal's housekeeping. */
export interface ConversationDoor {
  /**
   * Hands an accepted message to its conversation (conversationRouting.ts), durably: once this succeeds the message reaches `receive` (now,
   * or after a restart) until `receive` completes for it. Handing the same message again is one message.
   */
  readonly deliver: (delivery: Delivery, conversation: string) => Effect.Effect<void, DeliveryError>
  /** Forgets what the journal holds of messages whose `receive` completed (they are in the session). */
  readonly prune: Effect.Effect<void>
}

/**
 * The conversations as durable actors. `open` registers `receive` as what every conversation does with a message
 * (for the scope's lifetime) and returns the door; `receive` completes once the message is recorded in the session,
 * and a message whose `receive` did not complete (a crash, a shutdown) reaches it again.
 */
export class Conversations extends Context.Tag("kern/runtime/Conversations")<Conversations, {
  readonly open: (receive: (delivery: Delivery) => Effect.Effect<void>) => Effect.Effect<ConversationDoor, never, Scope.Scope>
}>() {}

/**
 * The conversations on @effect/cluster over kern.db (src/runtime/cluster/), loaded when a runtime is built: the cluster's
 * code stays out of every process that runs no agent (`kern --help`, `kern status`, …).
 */
export const layerDurable = Layer.unwrapEffect(
  Effect.map(Effect.promise(() => import("./cluster/ConversationsLive.js")), (module) => module.layer)
)
