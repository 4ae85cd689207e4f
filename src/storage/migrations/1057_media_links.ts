import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Which conversation a stored file belongs to (issue 32): a file that came with a message, or one the agent sent. A
 * paired user's web session, or their conversation's `message` tool, reaches a media id only through a link to its
 * own conversation; the same bytes sent in two conversations are two links to one stored file.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE media_links (
    media_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    PRIMARY KEY (media_id, conversation_id)
  ) WITHOUT ROWID`
})
