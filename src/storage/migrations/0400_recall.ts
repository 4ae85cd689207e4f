import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The recall index: every session message (for load mode), the chunks searched, the per-session reading state
 * (byte offset and file identity, so a rewritten or truncated file is read again from the start), the knowledge and
 * notes files by content hash, FTS5 over chunk text and the float vectors. The binary vec0 prefilter is created
 * once the embedding dimension is known (src/recall/RecallStoreSqlite.ts).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS recall_messages (
    session_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    role TEXT NOT NULL,
    at_ms INTEGER NOT NULL,
    tool_calls INTEGER NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (session_id, idx)
  ) WITHOUT ROWID`
  yield* sql`CREATE TABLE IF NOT EXISTS recall_chunks (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    session_id TEXT,
    path TEXT,
    message_start INTEGER NOT NULL,
    message_end INTEGER NOT NULL,
    start_ms INTEGER NOT NULL,
    end_ms INTEGER NOT NULL,
    text TEXT NOT NULL,
    embedded INTEGER NOT NULL DEFAULT 0
  )`
  yield* sql`CREATE INDEX IF NOT EXISTS recall_chunks_session ON recall_chunks (session_id, message_start)`
  yield* sql`CREATE INDEX IF NOT EXISTS recall_chunks_path ON recall_chunks (path)`
  yield* sql`CREATE INDEX IF NOT EXISTS recall_chunks_unembedded ON recall_chunks (id) WHERE embedded = 0`
  yield* sql`CREATE TABLE IF NOT EXISTS recall_sessions (
    session_id TEXT PRIMARY KEY NOT NULL,
    dev TEXT NOT NULL,
    ino TEXT NOT NULL,
    offset INTEGER NOT NULL,
    messages INTEGER NOT NULL,
    chunked INTEGER NOT NULL
  )`
  yield* sql`CREATE TABLE IF NOT EXISTS recall_files (path TEXT PRIMARY KEY NOT NULL, hash TEXT NOT NULL)`
  yield* sql`CREATE TABLE IF NOT EXISTS recall_meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)`
  yield* sql`CREATE VIRTUAL TABLE IF NOT EXISTS recall_fts USING fts5(text, tokenize = 'porter unicode61')`
  yield* sql`CREATE TABLE IF NOT EXISTS recall_vectors (
    chunk_id INTEGER PRIMARY KEY NOT NULL REFERENCES recall_chunks (id) ON DELETE CASCADE,
    embedding BLOB NOT NULL
  )`
})
