import { Duration, Option, Schema } from "effect"
import type { KnownSecret } from "../config/KnownSecrets.js"
import type { KernConfig } from "../config/schema.js"
import { redactSecretsInText } from "../kernel/secretGuard.js"

/**
 * How the summary model has been doing, kept in kern.db (migration 0850): the failures since its last success, the
 * last error (redacted and short), and until when no summary is asked for (the backoff).
 */
export class SummarizerHealth extends Schema.Class<SummarizerHealth>("SummarizerHealth")({
  /** Which summary model this is about (`summarizerOf`). */
  summarizer: Schema.String,
  consecutiveFailures: Schema.Number,
  lastError: Schema.NullOr(Schema.String),
  lastFailureAtMs: Schema.NullOr(Schema.Number),
  lastSuccessAtMs: Schema.NullOr(Schema.Number),
  /** No summary call before this (epoch ms); null when the summarizer is not backing off. */
  nextAttemptAtMs: Schema.NullOr(Schema.Number)
}) {}

/**
 * The summary model as configured: provider, base URL and model. Failures of another (the operator changed the
 * config and restarted) say nothing about this one.
 */
export const summarizerOf = (config: Pick<KernConfig, "provider" | "baseURL" | "summaryModel" | "model">): string =>
  [config.provider, config.baseURL ?? "", config.summaryModel ?? config.model ?? ""].join(" ")

/** A summarizer with no failure on record; `lastSuccessAtMs` is carried over when it replaces another's record. */
export const healthyFor = (summarizer: string, lastSuccessAtMs: number | null = null) =>
  new SummarizerHealth({
    summarizer,
    consecutiveFailures: 0,
    lastError: null,
    lastFailureAtMs: null,
    lastSuccessAtMs,
    nextAttemptAtMs: null
  })

/** The health on record for `summarizer`: another's record (the config changed) starts it afresh, its last success kept. */
export const healthOf = (stored: Option.Option<SummarizerHealth>, summarizer: string): SummarizerHealth =>
  Option.match(stored, {
    onNone: () => healthyFor(summarizer),
    onSome: (health) => (health.summarizer === summarizer ? health : healthyFor(summarizer, health.lastSuccessAtMs))
  })

/**
 * The wait after the n-th failure in a row: 30 s, doubling, at most 30 minutes. A failing summarizer costs a turn
 * nothing while it waits (the context falls back to cutting at user messages), so the wait can grow long; a
 * recovered one is found at the first attempt after it.
 */
export const summaryBackoff = {
  base: Duration.seconds(30),
  factor: 2,
  cap: Duration.minutes(30)
} as const

export const backoffDelay = (failures: number): Duration.Duration =>
  Duration.min(
    summaryBackoff.cap,
    Duration.times(summaryBackoff.base, Math.pow(summaryBackoff.factor, Math.max(0, Math.min(failures, 32) - 1)))
  )

/**
 * Whether a summary may be asked for now: `open` while the summarizer works; `probe` when it failed and its wait is
 * over (one call, alone, says whether it is back); `closed` while it waits.
 */
export type Admission = "open" | "probe" | "closed"

export const admission = (health: SummarizerHealth, nowMs: number): Admission =>
  health.consecutiveFailures === 0
    ? "open"
    : health.nextAttemptAtMs !== null && nowMs < health.nextAttemptAtMs
    ? "closed"
    : "probe"

/**
 * After a failed summary. Calls already in flight when the first of them failed (a pass writes a few at once) fail
 * within the wait that failure started: they say nothing new about the model and do not lengthen it.
 */
export const afterFailure = (health: SummarizerHealth, nowMs: number, error: string): SummarizerHealth => {
  const waiting = health.nextAttemptAtMs !== null && nowMs < health.nextAttemptAtMs
  const failures = waiting ? health.consecutiveFailures : health.consecutiveFailures + 1
  return new SummarizerHealth({
    summarizer: health.summarizer,
    consecutiveFailures: failures,
    lastError: error,
    lastFailureAtMs: nowMs,
    lastSuccessAtMs: health.lastSuccessAtMs,
    nextAttemptAtMs: waiting ? health.nextAttemptAtMs : nowMs + Duration.toMillis(backoffDelay(failures))
  })
}

/** Waived wait: the next summary asked for is a probe now (the operator asked, as `kern segments rebuild` does). */
export const withoutWait = (health: SummarizerHealth, nowMs: number): SummarizerHealth =>
  health.consecutiveFailures === 0 ? health : new SummarizerHealth({ ...health, nextAttemptAtMs: nowMs })

export const afterSuccess = (health: SummarizerHealth, nowMs: number): SummarizerHealth =>
  new SummarizerHealth({
    summarizer: health.summarizer,
    consecutiveFailures: 0,
    lastError: health.lastError,
    lastFailureAtMs: health.lastFailureAtMs,
    lastSuccessAtMs: nowMs,
    nextAttemptAtMs: null
  })

/** Characters of an error kept for the status: enough to say what failed, not a provider's whole HTML page. */
export const errorChars = 240

/** An error as the status shows it: known secrets redacted, on one line, at most `errorChars`. */
export const shortError = (message: string, secrets: ReadonlyArray<KnownSecret>): string => {
  const line = redactSecretsInText(message, secrets).replace(/\s+/g, " ").trim()
  return line.length <= errorChars ? line : `${line.slice(0, errorChars - 1)}…`
}
