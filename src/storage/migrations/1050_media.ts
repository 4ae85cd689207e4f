import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Files that come with messages (issue 32): the media store's index (the bytes are in `.kern/media/<sha256>`), and the
 * inbox's `attachments` column, a JSON array of references (session/messages.ts Attachment), null when a message has none.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE media (
    media_id TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL,
    media_type TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL
  ) WITHOUT ROWID`
  yield* sql`ALTER TABLE inbox ADD COLUMN attachments TEXT`
})
