import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"

/** A stored file as a reader is given it: the media type sniffed when it was stored, and the conversations it belongs to. */
export interface ServedMedia {
  readonly mediaType: string
  readonly conversations: ReadonlyArray<string>
}

/** The pattern of a media store id (Attachment.id): nothing else names a stored file. */
export const mediaIdPattern = /^med_[0-9a-f]{24}$/

const Row = Schema.Struct({ mediaType: Schema.String, conversationId: Schema.NullOr(Schema.String) })

/**
 * What kern.db says of a media id: its stored type and its links (media_links), or undefined when it names no stored
 * file (a pruned one's row is gone; its bytes may still be missing when its row is not: MediaStore.read tells).
 */
export const servedMedia = (mediaId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT m.media_type, l.conversation_id FROM media m LEFT JOIN media_links l ON l.media_id = m.media_id
        WHERE m.media_id = ${mediaId}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(Row))),
      Effect.map((rows): ServedMedia | undefined => {
        const first = rows[0]
        if (first === undefined) return undefined
        return {
          mediaType: first.mediaType,
          conversations: rows.flatMap((row) => row.conversationId === null ? [] : [row.conversationId])
        }
      })
    )).pipe(Effect.withSpan("kern.media.served"))
