import type { SqlClient } from "@effect/sql"
import { Either, Schema } from "effect"

/**
 * An audit event as one row of `kernel_events` and one line of an audit journal: the values of `columns`, in their
 * order, as a JSON array. The journal line is this array's JSON, and a batch of lines is written to kern.db in one
 * statement that takes them as one JSON array of arrays (one bound parameter: the statement is prepared once, and a
 * batch is atomic without a transaction of its own).
 */

/** kernel_events' columns, in the order of an event's values. New columns only ever go at the end. */
export const columns = [
  "ts_ms", "decision_key", "run_id", "trace_id", "session_id", "tool_id", "args_digest", "status", "error_code",
  "error_message", "latency_ms", "retries", "contract_fingerprint", "registered_fingerprint", "contract_status",
  "contract_enforcement", "contract_mismatch", "detail"
] as const

export type Bound = string | number | null

/** The fields of an event that become its row (the event log stamps `tsMs`). */
export interface EventFields {
  readonly tsMs: number
  readonly decisionKey: string
  readonly runId: string
  readonly traceId: string
  readonly sessionId?: string | undefined
  readonly toolId?: string | null | undefined
  readonly argsDigest?: string | null | undefined
  readonly status: string
  readonly errorCode?: string | null | undefined
  readonly errorMessage?: string | null | undefined
  readonly latencyMs?: number | null | undefined
  readonly retries?: number | null | undefined
  readonly contractFingerprint?: string | null | undefined
  readonly registeredFingerprint?: string | null | undefined
  readonly contractStatus?: string | null | undefined
  readonly contractEnforcement?: string | null | undefined
  readonly contractMismatch?: boolean | null | undefined
  readonly detail?: string | null | undefined
}

export const valuesOf = (event: EventFields): ReadonlyArray<Bound> => valuesAt(event, event.tsMs, event.errorMessage, event.detail)

/**
 * An event's values with its time and free texts given apart: the event log stamps the time and redacts the texts
 * without copying the event first (a copy of a call's event cost more than its journal line). A number JSON cannot
 * hold (NaN, an infinity) is null and -0 is 0, as the journal line writes them: bound as they are, the values make the
 * row the line makes.
 */
export const valuesAt = (
  event: Omit<EventFields, "tsMs">,
  tsMs: number,
  errorMessage: string | null | undefined,
  detail: string | null | undefined
): ReadonlyArray<Bound> => pushValuesAt([], event, tsMs, errorMessage, detail)

/** `valuesAt`, appended to `into` (the event log's copy of its journal's rows, pendingRows.ts) with no array of their own. */
export const pushValuesAt = (
  into: Array<Bound>,
  event: Omit<EventFields, "tsMs">,
  tsMs: number,
  errorMessage: string | null | undefined,
  detail: string | null | undefined
): Array<Bound> => {
  into.push(
    finite(tsMs),
    event.decisionKey,
    event.runId,
    event.traceId,
    event.sessionId ?? "",
    event.toolId ?? null,
    event.argsDigest ?? null,
    event.status,
    event.errorCode ?? null,
    errorMessage ?? null,
    finite(event.latencyMs),
    finite(event.retries),
    event.contractFingerprint ?? null,
    event.registeredFingerprint ?? null,
    event.contractStatus ?? null,
    event.contractEnforcement ?? null,
    event.contractMismatch === undefined || event.contractMismatch === null ? null : event.contractMismatch ? 1 : 0,
    detail ?? null
  )
  return into
}

// `+ 0`: -0 is 0, as JSON writes it.
const finite = (value: number | null | undefined): number | null =>
  value === null || value === undefined || !Number.isFinite(value) ? null : value + 0

/** A character JSON.stringify writes escaped in a string: a quote, a backslash, a control character, a surrogate. */
const escaped = /["\\\u0000-\u001f\ud800-\udfff]/

/** A text value as JSON: most are ids, keys and digests with nothing to escape, quoted as they are. */
const jsonText = (value: string | null | undefined): string =>
  value === null || value === undefined ? "null" : escaped.test(value) ? JSON.stringify(value) : `"${value}"`

/** A number value as JSON, by the rule the bound values follow (`finite`). */
const jsonNumber = (value: number | null | undefined): string => {
  const number = finite(value)
  return number === null ? "null" : `${number}`
}

/**
 * An event's journal line, newline included: the text of `JSON.stringify(valuesAt(…))`, written out directly (the
 * values are strings, numbers and nulls in a fixed order), with no array made for it first.
 */
export const lineAt = (
  event: Omit<EventFields, "tsMs">,
  tsMs: number,
  errorMessage: string | null | undefined,
  detail: string | null | undefined
): string =>
  `[${jsonNumber(tsMs)},${jsonText(event.decisionKey)},${jsonText(event.runId)},${jsonText(event.traceId)},${
    jsonText(event.sessionId ?? "")
  },${jsonText(event.toolId)},${jsonText(event.argsDigest)},${jsonText(event.status)},${jsonText(event.errorCode)},${
    jsonText(errorMessage)
  },${jsonNumber(event.latencyMs)},${jsonNumber(event.retries)},${jsonText(event.contractFingerprint)},${
    jsonText(event.registeredFingerprint)
  },${jsonText(event.contractStatus)},${jsonText(event.contractEnforcement)},${
    event.contractMismatch === undefined || event.contractMismatch === null ? "null" : event.contractMismatch ? "1" : "0"
  },${jsonText(detail)}]\n`

/**
 * Inserts the rows of a JSON array of value arrays, in order (SQLite). `jsonb_each`, not `json_each`: its elements
 * come as JSONB, which `->>` reads without parsing them again (json_each hands each row back as JSON text, parsed
 * anew): about half the cost of a row (6 µs against 12). The batch is text, or the UTF-8 bytes of its text (an event
 * log's own journal as read from disk, auditJournal.ts `readUnreadBatch`): bound as a blob, which the CAST takes as
 * the text it holds without a copy. No ORDER BY: jsonb_each gives the array's elements in order and the insert takes
 * them as they come, where `ORDER BY key` put every batch through a sorter first (SQLite does not know the table
 * function's rows are in key order); test/kernel/journalBatch.test.ts holds that event ids follow the recorded order.
 */
export const insertRows = `INSERT INTO kernel_events (${columns.join(", ")}) SELECT ${
  columns.map((_, i) => `value ->> ${i}`).join(", ")
} FROM jsonb_each(CAST(? AS TEXT))`

/**
 * Rows an event log holds as their values (the lines of its own journal it wrote a moment ago, pendingRows.ts) go to
 * kern.db bound as they are: a value's `->>` from a line's JSON costs SQLite about 0.3 µs, 18 a row. Consecutive rows
 * that differ only in their time, arguments' digest and latency (a run's calls of one tool) bind the other columns
 * once for up to 256 rows (SQLite alone: 2.3 µs a row against 3.9 with all its values bound, and 5–7 through `->>`);
 * other rows bind all their values. Statements of a few sizes, each prepared once; a batch is cut into the largest
 * that fit.
 */
const chunkSizes = [256, 64, 16, 4, 1] as const

/** The columns a row binds of its own in a statement of shared values: ts_ms, args_digest, latency_ms. */
const ownColumns: ReadonlyArray<number> = [0, 6, 10]
const sharedColumns: ReadonlyArray<number> = columns.map((_, i) => i).filter((i) => !ownColumns.includes(i))

const placeholders = (count: number) => `(${Array.from({ length: count }, () => "?").join(",")})`

const insertAllOf = (rows: number) =>
  `INSERT INTO kernel_events (${columns.join(", ")}) VALUES ${Array.from({ length: rows }, () => placeholders(columns.length)).join(",")}`

// The shared values first (parameters are numbered in the order they appear), then each row's own.
const insertSharedOf = (rows: number) =>
  `WITH shared (${sharedColumns.map((i) => `c${i}`).join(", ")}) AS (VALUES ${placeholders(sharedColumns.length)}) ` +
  `INSERT INTO kernel_events (${columns.join(", ")}) SELECT ${
    columns.map((_, i) => ownColumns.includes(i) ? `own.column${ownColumns.indexOf(i) + 1}` : `shared.c${i}`).join(", ")
  } FROM (VALUES ${Array.from({ length: rows }, () => placeholders(ownColumns.length)).join(",")}) AS own, shared`

const insertAll: ReadonlyMap<number, string> = new Map(chunkSizes.map((rows) => [rows, insertAllOf(rows)]))
const insertShared: ReadonlyMap<number, string> = new Map(chunkSizes.map((rows) => [rows, insertSharedOf(rows)]))

/** How many rows from `at` on (at most `max`) have the shared columns of row `at`. */
const runFrom = (values: ReadonlyArray<Bound>, rows: number, at: number, max: number): number => {
  const first = at * columns.length
  let length = 1
  for (; length < max && at + length < rows; length++) {
    const row = (at + length) * columns.length
    let same = true
    for (const i of sharedColumns) if (values[row + i] !== values[first + i]) same = false
    if (!same) break
  }
  return length
}

/** A run this long or longer binds its shared values once. */
const minRun = 4

/**
 * The statements, each with its parameters, that insert `rows` rows whose values are `values`, one row after the
 * other (SQLite): a statement's rows take event ids in the order of its VALUES, and the statements run in order.
 */
export const insertValues = (values: ReadonlyArray<Bound>, rows: number): ReadonlyArray<readonly [string, ReadonlyArray<Bound>]> => {
  const width = columns.length
  const statements: Array<readonly [string, ReadonlyArray<Bound>]> = []
  let at = 0
  while (at < rows) {
    const run = runFrom(values, rows, at, chunkSizes[0])
    if (run >= minRun) {
      const size = chunkSizes.find((size) => size <= run)!
      const params: Array<Bound> = sharedColumns.map((i) => values[at * width + i]!)
      for (let row = at; row < at + size; row++) for (const i of ownColumns) params.push(values[row * width + i]!)
      statements.push([insertShared.get(size)!, params])
      at += size
      continue
    }
    // Rows up to the next run long enough, all their values bound.
    let end = at + run
    while (end < rows) {
      const next = runFrom(values, rows, end, minRun)
      if (next >= minRun) break
      end += next
    }
    while (at < end) {
      const size = chunkSizes.find((size) => size <= end - at)!
      statements.push([insertAll.get(size)!, values.slice(at * width, (at + size) * width)])
      at += size
    }
  }
  return statements
}

/** PostgreSQL takes a JSON value as text: the columns that are not text are cast to theirs. */
const pgTypes: Partial<Record<(typeof columns)[number], string>> = {
  ts_ms: "bigint",
  latency_ms: "double precision",
  retries: "bigint",
  contract_mismatch: "bigint"
}

/** The same statement on PostgreSQL. */
export const insertRowsPg = `INSERT INTO kernel_events (${columns.join(", ")}) SELECT ${
  columns.map((column, i) => pgTypes[column] === undefined ? `value ->> ${i}` : `(value ->> ${i})::${pgTypes[column]}`).join(", ")
} FROM json_array_elements($1::json) WITH ORDINALITY AS batch(value, key) ORDER BY key`

/** The statement for the client's database, taking the batch as its one parameter. */
export const insertRowsFor = (sql: SqlClient.SqlClient): string =>
  sql.onDialectOrElse({ pg: () => insertRowsPg, orElse: () => insertRows })

const Text = Schema.String
const OptionalText = Schema.NullOr(Schema.String)
const OptionalNumber = Schema.NullOr(Schema.Number)

/**
 * A journal line as it must be to become a row: the NOT NULL columns present with their types. Values past the known
 * columns (a newer kern's) are allowed and left out.
 */
const JournalLine = Schema.parseJson(Schema.Tuple(
  [
    Schema.Number, // ts_ms
    Text, // decision_key
    Text, // run_id
    Text, // trace_id
    Text, // session_id
    OptionalText, // tool_id
    OptionalText, // args_digest
    Text, // status
    OptionalText, // error_code
    OptionalText, // error_message
    OptionalNumber, // latency_ms
    OptionalNumber, // retries
    OptionalText, // contract_fingerprint
    OptionalText, // registered_fingerprint
    OptionalText, // contract_status
    OptionalText, // contract_enforcement
    OptionalNumber, // contract_mismatch
    OptionalText // detail
  ],
  Schema.Unknown
))

const decodeLine = Schema.decodeUnknownEither(JournalLine)

/** Whether a journal line is an event kern.db can take; the reason when it is not. */
export const lineProblem = (line: string): string | undefined => {
  const decoded = decodeLine(line)
  return Either.isRight(decoded) ? undefined : decoded.left.message.split("\n")[0]
}
