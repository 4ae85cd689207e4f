import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"

/** The media store's links to conversations (kern.db `media_links`): who may see a stored file. */

/** Links files to the conversation they came in or were sent to; linking twice is one link. */
export const linkMedia = (ids: ReadonlyArray<string>, conversationId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.forEach(ids, (mediaId) =>
      sql`INSERT INTO media_links ${sql.insert({ mediaId, conversationId })} ON CONFLICT DO NOTHING`, { discard: true })).pipe(
    Effect.withSpan("kern.media.link")
  )

const Count = Schema.Struct({ n: Schema.Number })

/** Whether a stored file belongs to a conversation. */
export const isLinked = (mediaId: string, conversationId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT count(*) AS n FROM media_links WHERE media_id = ${mediaId} AND conversation_id = ${conversationId}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(Count))),
      Effect.map((rows) => (rows[0]?.n ?? 0) > 0)
    ))
