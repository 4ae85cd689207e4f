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

/**
 * A row as kern's SQLite store writes it, projected to the schema's fields; undefined for any other row (a value of
 * another type, a field missing, PostgreSQL's 64-bit integers as strings). Checked field by field in plain code:
 * a Schema decode costs about 7 µs a chunk row, which a search reading hundreds of rows feels.
 */
export type RowCheck<A> = (row: unknown) => A | undefined

/**
 * `decoded`, with rows that pass `check` taken as they are: the Schema decodes the list only when a row does not
 * (the same result for a row of another form, or the same error naming the column).
 */
export const decodedChecked = <A, I>(schema: Schema.Schema<A, I>, check: RowCheck<A>) => {
  const decode = Schema.decodeUnknown(Schema.Array(schema))
  return <E, R>(rows: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    Effect.flatMap(rows, (list) => {
      const out: Array<A> = []
      for (const row of list) {
        const checked = check(row)
        if (checked === undefined) return decode(list)
        out.push(checked)
      }
      return Effect.succeed<ReadonlyArray<A>>(out)
    })
}

/** A plain object (as the SQL layer builds a row): its fields are its own, as the Schema reads them. */
export const isPlainRow = (row: unknown): row is Record<string, unknown> =>
  typeof row === "object" && row !== null && Object.getPrototypeOf(row) === Object.prototype
export const isNumber = (value: unknown): value is number => typeof value === "number"
const isText = (value: unknown): value is string => typeof value === "string"
const isNullableText = (value: unknown): value is string | null => value === null || typeof value === "string"

/** ChunkRowSchema's check (see RowCheck). */
export const chunkRowCheck: RowCheck<typeof ChunkRowSchema.Type> = (row) => {
  if (!isPlainRow(row)) return undefined
  const { endMs, id, messageEnd, messageStart, path, sessionId, source, startMs, text } = row
  return isNumber(id) && (source === "session" || source === "file") && isNullableText(sessionId) &&
      isNullableText(path) && isNumber(messageStart) && isNumber(messageEnd) && isNumber(startMs) && isNumber(endMs) &&
      isText(text)
    ? { id, source, sessionId, path, messageStart, messageEnd, startMs, endMs, text }
    : undefined
}

/** RankedRow's check (see RowCheck). */
export const rankedRowCheck: RowCheck<typeof RankedRow.Type> = (row) => {
  if (!isPlainRow(row)) return undefined
  const { id, score } = row
  return isNumber(id) && isNumber(score) ? { id, score } : undefined
}
