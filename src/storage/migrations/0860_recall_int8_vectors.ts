import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { bytesOf, float32FromBytes, quantize } from "../int8Vector.js"

const batchRows = 500

const VectorRows = Schema.Array(Schema.Struct({ chunkId: Schema.Number, embedding: Schema.Uint8ArrayFromSelf }))
const DimensionRows = Schema.Array(Schema.Struct({ value: Schema.String }))

/**
 * The recall vectors, float32 until now, become int8 with a scale per vector (src/storage/int8Vector.ts): a
 * quarter of the bytes, two vectors to a page. Every stored vector is converted here, so no reader meets the old
 * format. A blob that is not a float32 vector of the recorded dimension is dropped and its chunk marked unembedded:
 * the indexer embeds it again from the chunk's stored text. The binary prefilter (recall_vec) is left as it is: its
 * bits are the signs, which quantization keeps. The pages freed stay in the file (reused as the index grows) until
 * a VACUUM.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE recall_vectors_int8 (
    chunk_id INTEGER PRIMARY KEY NOT NULL REFERENCES recall_chunks (id) ON DELETE CASCADE,
    embedding BLOB NOT NULL,
    scale REAL NOT NULL
  )`
  const recorded = yield* sql`SELECT value FROM recall_meta WHERE key = 'embedding_dimension'`.pipe(
    Effect.flatMap(Schema.decodeUnknown(DimensionRows))
  )
  const dimension = Number(recorded[0]?.value)
  const hasVecTable = (yield* sql<{ readonly n: number }>`SELECT count(*) AS n FROM sqlite_master WHERE name = 'recall_vec'`)[0]!.n > 0
  for (;;) {
    const rows = yield* sql`SELECT chunk_id, embedding FROM recall_vectors ORDER BY chunk_id LIMIT ${batchRows}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(VectorRows))
    )
    if (rows.length === 0) break
    for (const row of rows) {
      if (Number.isInteger(dimension) && row.embedding.byteLength === dimension * 4) {
        const { scale, values } = quantize(float32FromBytes(row.embedding))
        yield* sql`INSERT INTO recall_vectors_int8 (chunk_id, embedding, scale) VALUES (${row.chunkId}, ${bytesOf(values)}, ${scale})`
      } else {
        yield* sql`UPDATE recall_chunks SET embedded = 0 WHERE id = ${row.chunkId}`
        if (hasVecTable) yield* sql`DELETE FROM recall_vec WHERE chunk_id = ${BigInt(row.chunkId)}`
      }
    }
    // Each batch leaves the old table as it goes: the pages it frees hold the next batches, so the file never grows.
    yield* sql`DELETE FROM recall_vectors WHERE chunk_id <= ${rows[rows.length - 1]!.chunkId}`
  }
  yield* sql`DROP TABLE recall_vectors`
  yield* sql`ALTER TABLE recall_vectors_int8 RENAME TO recall_vectors`
})
