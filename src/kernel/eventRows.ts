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
 * without copying the event first (a copy of a call's event cost more than its journal line).
 */
export const valuesAt = (
  event: Omit<EventFields, "tsMs">,
  tsMs: number,
  errorMessage: string | null | undefined,
  detail: string | null | undefined
): ReadonlyArray<Bound> => [
  tsMs,
  event.decisionKey,
  event.runId,
  event.traceId,
  event.sessionId ?? "",
  event.toolId ?? null,
  event.argsDigest ?? null,
  event.status,
  event.errorCode ?? null,
  errorMessage ?? null,
  event.latencyMs ?? null,
  event.retries ?? null,
  event.contractFingerprint ?? null,
  event.registeredFingerprint ?? null,
  event.contractStatus ?? null,
  event.contractEnforcement ?? null,
  event.contractMismatch === undefined || event.contractMismatch === null ? null : event.contractMismatch ? 1 : 0,
  detail ?? null
]

/** A character JSON.stringify writes escaped in a string: a quote, a backslash, a control character, a surrogate. */
const escaped = /["\\\u0000-\u001f\ud800-\udfff]/

/** A text value as JSON: most are ids, keys and digests with nothing to escape, quoted as they are. */
const jsonText = (value: string | null | undefined): string =>
  value === null || value === undefined ? "null" : escaped.test(value) ? JSON.stringify(value) : `"${value}"`

const jsonNumber = (value: number | null | undefined): string =>
  value === null || value === undefined || !Number.isFinite(value) ? "null" : `${value}`

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
