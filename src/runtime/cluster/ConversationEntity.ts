import { ClusterSchema, Entity, Sharding } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer } from "effect"
import { Conversations, type Delivery, DeliveryError } from "../Conversations.js"
import { InboxEntry } from "../Inbox.js"
import { deliveryFields, pruneJournal } from "./journal.js"

/**
 * A message for a conversation: an inbox row, journaled before it is delivered (Persisted) and identified by its inbox
 * id (primaryKey), so the inbox's replay after a restart, or a second hand-over, is the same message, not another.
 */
export const Deliver = Rpc.make("Deliver", {
  payload: InboxEntry.fields,
  primaryKey: (delivery) => String(delivery.id)
}).annotate(ClusterSchema.Persisted, true)

/** Each conversation is one entity; its id is the conversation's (`main`, or one of conversationIds.ts). */
export const Conversation = Entity.make("Conversation", [Deliver])

/**
 * Conversations as Entities of the cluster. A conversation's handler is the runtime's `receive`, which completes once
 * its message is in the session (or the session already held it): only then does the journal mark it processed, so a
 * message whose turn had not recorded it when the process died is delivered again at the next start.
 *
 * The handler waits for its message to be recorded rather than running the turn itself: the runtime's queue stays the
 * conversation's one line of turns, so a running turn still takes its own channel's newer messages at its next step
 * (their handlers wait meanwhile: concurrency is unbounded, and the queue, not the entity, serializes the turns).
 */
export const layer = Layer.effect(
  Conversations,
  Effect.gen(function*() {
    const sharding = yield* Sharding.Sharding
    const sql = yield* SqlClient.SqlClient
    // The cluster runs on the real clock (Cluster.ts): the entity's loops are forked where it is registered.
    const clock = Clock.make()
    /** Messages whose handler completed (processed, with their reply) are forgotten: the journal holds only what is pending. */
    const prune = pruneJournal(sql, { type: Conversation.type }, "the conversations' journal in kern.db")

    const open = (receive: (delivery: Delivery) => Effect.Effect<void>) =>
      Effect.gen(function*() {
        const handlers = Conversation.of({ Deliver: ({ payload }) => receive(payload) })
        yield* Layer.buildWithScope(Conversation.toLayer(handlers, { concurrency: "unbounded" }), yield* Effect.scope)
        const client = yield* Conversation.client
        const deliver = (delivery: Delivery, conversation: string) =>
          client(conversation).Deliver(deliveryFields(delivery), { discard: true }).pipe(
            // Already on its way to the conversation (journaled by an earlier hand-over): one message.
            Effect.catchTag("AlreadyProcessingMessage", () => Effect.void),
            Effect.mapError((error) =>
              new DeliveryError({ message: `could not hand message ${delivery.id} to its conversation: ${error.message}` })
            ),
            Effect.withSpan("kern.conversations.deliver")
          )
        yield* prune
        return { deliver, prune }
      }).pipe(Effect.provideService(Sharding.Sharding, sharding), Effect.withClock(clock))

    return Conversations.of({ open })
  })
)
