import { ClusterSchema, Entity, Sharding } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Layer } from "effect"
import { transaction } from "../../storage/transaction.js"
import { Conversations, type Delivery, DeliveryError } from "../Conversations.js"
import { InboxEntry } from "../Inbox.js"

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

/** The journal's tables (SqlMessageStorage's default prefix, `cluster`). */
const messagesTable = "cluster_messages"
const repliesTable = "cluster_replies"

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
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    // The cluster runs on the real clock (Cluster.ts): the entity's loops are forked where it is registered.
    const clock = Clock.make()
    const processed = sql.onDialectOrElse({ sqlite: () => sql.literal("1"), orElse: () => sql.literal("TRUE") })

    const done = sql`${sql(messagesTable)} WHERE entity_type = ${Conversation.type} AND processed = ${processed}`
    /**
     * Messages whose handler completed (processed, with their reply) are forgotten: the journal holds only what is
     * pending. A read first: nothing is written when there is nothing to forget (kern.db may be locked by another
     * process, and a write waits for it).
     */
    const prune: Effect.Effect<void> = sql`SELECT 1 AS found FROM ${done} LIMIT 1`.pipe(
      Effect.flatMap((rows): Effect.Effect<void, SqlError> =>
        rows.length === 0 ? Effect.void : Effect.zipRight(
          sql`DELETE FROM ${sql(repliesTable)} WHERE request_id IN (SELECT id FROM ${done})`,
          sql`DELETE FROM ${done}`
        ).pipe(transaction(sql), Effect.asVoid)
      ),
      Effect.catchAll((error) => Effect.logWarning(`kern: could not prune the conversations' journal in kern.db: ${error.message}`)),
      Effect.withSpan("kern.conversations.prune")
    )

    const open = (receive: (delivery: Delivery) => Effect.Effect<void>) =>
      Effect.gen(function*() {
        const handlers = Conversation.of({ Deliver: ({ payload }) => receive(payload) })
        yield* Layer.buildWithScope(Conversation.toLayer(handlers, { concurrency: "unbounded" }), yield* Effect.scope)
        const client = yield* Conversation.client
        const deliver = (delivery: Delivery, conversation: string) =>
          client(conversation).Deliver(
            {
              id: delivery.id,
              interface: delivery.interface,
              channel: delivery.channel,
              userId: delivery.userId,
              text: delivery.text,
              ...(delivery.attachments === undefined ? {} : { attachments: delivery.attachments }),
              receivedAtMs: delivery.receivedAtMs
            },
            { discard: true }
          ).pipe(
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
