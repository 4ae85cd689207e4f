import { Effect, Schema } from "effect"

// The rows the recall stores read, decoded with their Schema: a table that is not what this kern wrote is an error
// naming the column. Shared by the SQLite and PostgreSQL stores (the same columns on both).

/** An integer column: a number from SQLite, and from PostgreSQL a 64-bit one arrives as a string (node-postgres). */
const Int = Schema.Union(Schema.Number, Schema.NumberFromString)
const Nullable = Schema.NullOr(Schema.String)

export const SessionStateRow = Schema.Struct({
  sessionId: Schema.String,
  dev: Schema.String,
  ino: Schema.String,
  offset: Int,
  messages: Int,
  chunked: Int
})
export const MessageRow = Schema.Struct({ idx: Int, role: Schema.String, atMs: Int, toolCalls: Int, text: Schema.String })
export const ChunkRowSchema = Schema.Struct({
  id: Int,
  source: Schema.Literal("session", "file"),
  sessionId: Nullable,
  path: Nullable,
  messageStart: Int,
  messageEnd: Int,
  startMs: Int,
  endMs: Int,
  text: Schema.String
})
export const RankedRow = Schema.Struct({ id: Int, score: Schema.Number })
export const CountRowSchema = Schema.Struct({
  messages: Int,
  chunks: Int,
  unembedded: Int,
  sessions: Int,
  files: Int,
  fromMs: Schema.NullOr(Int),
  toMs: Schema.NullOr(Int)
})

export const decoded = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknown(Schema.Array(schema))
  return <E, R>(rows: Effect.Effect<ReadonlyArray<unknown>, E, R>) => Effect.flatMap(rows, (list) => decode(list))
}
