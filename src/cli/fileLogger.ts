import { Cause, HashMap, Layer, List, Logger, LogLevel } from "effect"
import type { KnownSecret } from "../config/KnownSecrets.js"
import { redactSecrets, redactSecretsInText } from "../kernel/secretGuard.js"
import { foregroundLogger } from "./foregroundLogger.js"
import { encodeRecord, LogRecord } from "./logRecord.js"

/** A value of an annotation longer than this is cut (after redaction, so no part of a secret is ever left). */
export const maxAnnotationChars = 300

const show = (value: unknown): string =>
  typeof value === "string"
    ? value
    : Cause.isCause(value)
    ? Cause.pretty(value)
    : value instanceof Error
    ? value.message
    : JSON.stringify(value) ?? String(value)

/** Annotations in a steady order, where it happened first (a HashMap has none of its own); the rest by name. */
const leading = ["turn", "session", "channel", "user", "tool", "outcome"]
const placeOf = (key: string): number => {
  const at = leading.indexOf(key)
  return at === -1 ? leading.length : at
}

const bounded = (text: string): string => text.length > maxAnnotationChars ? `${text.slice(0, maxAnnotationChars)}…` : text

/** An annotation as JSON: numbers and booleans as they are, anything else redacted, then as (bounded) text. */
const annotation = (value: unknown, secrets: ReadonlyArray<KnownSecret>): unknown =>
  typeof value === "number" || typeof value === "boolean" || value === null
    ? value
    : bounded(show(redactSecrets(value, secrets)))

/**
 * One log line as a JSON record, with every known secret replaced by `[redacted:NAME]`: the message, each
 * annotation (a tool's arguments among them) and the cause go through the one redactor (src/kernel/secretGuard.ts).
 */
export const toRecord = (
  options: Logger.Logger.Options<unknown>,
  secrets: ReadonlyArray<KnownSecret>
): LogRecord => {
  const parts = Array.isArray(options.message) ? options.message : [options.message]
  const annotations: Record<string, unknown> = {}
  const entries = HashMap.toEntries(options.annotations).sort(([a], [b]) => placeOf(a) - placeOf(b) || a.localeCompare(b))
  for (const [key, value] of entries) annotations[key] = annotation(value, secrets)
  const spans: Record<string, number> = {}
  const now = options.date.getTime()
  for (const span of List.toArray(options.spans)) spans[span.label] = now - span.startTime
  return new LogRecord({
    time: options.date.toISOString(),
    level: options.logLevel.label,
    message: redactSecretsInText(parts.map(show).join(" "), secrets),
    annotations,
    spans,
    ...(Cause.isEmpty(options.cause) ? {} : { cause: redactSecretsInText(Cause.pretty(options.cause), secrets) })
  }, true)
}

/** A logger writing each line as a JSON record through `write` (the background agent: its stderr, the log file). */
export const jsonLineLogger = (secrets: ReadonlyArray<KnownSecret>, write: (line: string) => void) =>
  Logger.make((options) => write(`${encodeRecord(toRecord(options, secrets))}\n`))

/**
 * The background agent logs only through the JSON line logger (runMain installs the pretty one by default, the foreground its own on stderr), from
 * debug on: `kern logs` shows info and above, `--level debug` the chatty lines (each tool call, each model step).
 */
export const jsonLineLogging = (secrets: ReadonlyArray<KnownSecret>, write: (line: string) => void) =>
  Layer.mergeAll(
    Logger.remove(Logger.defaultLogger),
    Logger.remove(Logger.prettyLoggerDefault),
    Logger.remove(foregroundLogger),
    Logger.add(jsonLineLogger(secrets, write)),
    Logger.minimumLogLevel(LogLevel.Debug)
  )
