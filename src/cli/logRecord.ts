import { Either, Schema } from "effect"

/**
 * One line of the background agent's log (.kern/logs/kern.log): a JSON object per line, what `kern logs --json`
 * prints and `kern logs` renders as text. `annotations` say where it happened (turn, session, channel, user, tool…),
 * `spans` how long each enclosing log span (the turn) had run, in milliseconds. A line kern did not write as JSON (an
 * older kern's `<time> <LEVEL> text`, a stack trace, Node's own warnings) is read as a record without annotations.
 */
export class LogRecord extends Schema.Class<LogRecord>("LogRecord")({
  /** ISO time; absent for a line that is not a log line of its own (a stack trace's continuation). */
  time: Schema.optional(Schema.String),
  level: Schema.String,
  message: Schema.String,
  annotations: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  spans: Schema.Record({ key: Schema.String, value: Schema.Number }),
  /** The failure behind an error line, as Effect prints a Cause. */
  cause: Schema.optional(Schema.String)
}) {}

const decodeJsonLine = Schema.decodeUnknownEither(Schema.parseJson(LogRecord))
/** A record as one line of JSON (its fields are plain JSON values by construction). */
export const encodeRecord = (record: LogRecord): string => JSON.stringify(record)

const rank: Readonly<Record<string, number>> = { DEBUG: 0, TRACE: 0, INFO: 1, WARN: 2, WARNING: 2, ERROR: 3, FATAL: 3 }
/** A level's place, lowest first; an unknown level counts as info. */
export const levelRank = (level: string): number => rank[level.toUpperCase()] ?? 1

const plainLine = /^(\S+) (TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL) (.*)$/

/** A line of the log as it was written: a JSON record, or plain text (`json` false: shown as it is). */
export interface LogLine {
  readonly record: LogRecord
  readonly json: boolean
  readonly text: string
}

/**
 * The lines of a log, each with its record. A plain line without a level of its own (a stack trace, output from
 * before the logger) takes the level of the line above: `carried` (a rank) is that level at the start of a read, and
 * what it is at the end comes back for the next read of a followed log.
 */
export const readLines = (
  lines: ReadonlyArray<string>,
  carried = "INFO"
): { readonly lines: ReadonlyArray<LogLine>; readonly carried: string } => {
  let level = carried
  const out: Array<LogLine> = []
  for (const text of lines) {
    const decoded = text.startsWith("{") ? decodeJsonLine(text) : undefined
    if (decoded !== undefined && Either.isRight(decoded)) {
      level = decoded.right.level
      out.push({ record: decoded.right, json: true, text })
      continue
    }
    const plain = plainLine.exec(text)
    if (plain !== null) level = plain[2]!
    const record = plain === null
      ? new LogRecord({ level, message: text, annotations: {}, spans: {} }, true)
      : new LogRecord({ time: plain[1]!, level, message: plain[3]!, annotations: {}, spans: {} }, true)
    out.push({ record, json: false, text })
  }
  return { lines: out, carried: level }
}

/** The lines at `min` or above. */
export const atLevel = (lines: ReadonlyArray<LogLine>, min: string | undefined): ReadonlyArray<LogLine> => {
  if (min === undefined) return lines
  const floor = levelRank(min)
  return lines.filter((line) => levelRank(line.record.level) >= floor)
}

const fieldValue = (value: unknown): string => {
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? String(value)
  return /^[^\s"=]+$/.test(text) ? text : JSON.stringify(text)
}

/** A record as `kern logs` shows it: `<time> <LEVEL> <message> key=value … span=Nms`, then its cause, indented. */
export const renderText = (line: LogLine): string => {
  if (!line.json) return line.text
  const { annotations, cause, level, message, spans, time } = line.record
  const fields = [
    ...Object.entries(annotations).map(([key, value]) => `${key}=${fieldValue(value)}`),
    ...Object.entries(spans).map(([label, ms]) => `${label}=${ms}ms`)
  ]
  const head = [time ?? "", level.toUpperCase(), message, ...fields].filter((part) => part !== "").join(" ")
  return cause === undefined ? head : `${head}\n${cause.split("\n").map((l) => `  ${l}`).join("\n")}`
}

/** A record as `kern logs --json` prints it: one JSON object on one line. */
export const renderJson = (line: LogLine): string => line.json ? line.text : encodeRecord(line.record)
