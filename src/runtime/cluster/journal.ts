import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { transaction } from "../../storage/transaction.js"
import type { Delivery } from "../Conversations.js"

/** The journal's tables (SqlMessageStorage's default prefix, `cluster`). */
const messagesTable = "cluster_messages"
const repliesTable = "cluster_replies"

/**
 * Forgets the processed messages (and their replies) of one entity type, or of one entity: the cluster never prunes
 * its journal (examples/cluster, condition 4), and kern's handlers complete only once a message is in the session.
 * A read first: nothing is written when there is nothing to forget (kern.db may be locked by another process, and a
 * write waits for it). A failure is logged, never raised: the next prune tries again.
 */
export const pruneJournal = (
  client: SqlClient.SqlClient,
  entity: { readonly type: string; readonly id?: string },
  what: string
): Effect.Effect<void> => {
  const sql = client.withoutTransforms()
  const processed = sql.onDialectOrElse({ sqlite: () => sql.literal("1"), orElse: () => sql.literal("TRUE") })
  const done = entity.id === undefined
    ? sql`${sql(messagesTable)} WHERE entity_type = ${entity.type} AND processed = ${processed}`
    : sql`${sql(messagesTable)} WHERE entity_type = ${entity.type} AND entity_id = ${entity.id} AND processed = ${processed}`
  return sql`SELECT 1 AS found FROM ${done} LIMIT 1`.pipe(
    Effect.flatMap((rows): Effect.Effect<void, SqlError> =>
      rows.length === 0 ? Effect.void : Effect.zipRight(
        sql`DELETE FROM ${sql(repliesTable)} WHERE request_id IN (SELECT id FROM ${done})`,
        sql`DELETE FROM ${done}`
      ).pipe(transaction(sql), Effect.asVoid)
    ),
    Effect.catchAll((error) => Effect.logWarning(`kern: could not prune ${what}: ${error.message}`)),
    Effect.withSpan("kern.conversations.prune")
  )
}

/** A delivery as a Deliver payload carries it (the attachments only when it has some). */
export const deliveryFields = (delivery: Delivery) => ({
  id: delivery.id,
  interface: delivery.interface,
  channel: delivery.channel,
  userId: delivery.userId,
  text: delivery.text,
  ...(delivery.attachments === undefined ? {} : { attachments: delivery.attachments }),
  receivedAtMs: delivery.receivedAtMs
})
