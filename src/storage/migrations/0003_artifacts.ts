import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The artifact index: one row per stored tool output (the bytes live content-addressed under .kern/artifacts/),
 * and which sessions have seen which output, so a repeat in the same session becomes a short reference.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS tool_artifacts (
    artifact_id TEXT PRIMARY KEY NOT NULL,
    sha256 TEXT NOT NULL UNIQUE,
    bytes INTEGER NOT NULL,
    lines INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL
  )`
  yield* sql`CREATE TABLE IF NOT EXISTS tool_artifact_uses (
    session_id TEXT NOT NULL,
    artifact_id TEXT NOT NULL REFERENCES tool_artifacts (artifact_id),
    tool_id TEXT NOT NULL,
    first_seen_at_ms INTEGER NOT NULL,
    PRIMARY KEY (session_id, artifact_id)
  )`
})
