import { Schema } from "effect"

/** The summarizer's state as `kern status --json` and GET /status show it under `summarizer`. */
export const SummarizerStatus = Schema.Struct({
  /** `off`: summaryBudget 0; `ok`: the last summary asked for was written; `failing`: the last ones failed. */
  state: Schema.Literal("ok", "failing", "off"),
  /** ISO time of the last summary written (as kern.db last recorded it); null before the first. */
  lastSuccessAt: Schema.NullOr(Schema.String),
  /** Failed attempts since the last success (calls failing together count once). */
  consecutiveFailures: Schema.Number,
  /** The last failure, secrets redacted, on one line; kept after a recovery, as history. */
  lastError: Schema.NullOr(Schema.String),
  lastFailureAt: Schema.NullOr(Schema.String),
  /** While failing: no summary is asked for before this ISO time (the backoff). */
  nextAttemptAt: Schema.NullOr(Schema.String),
  /** The session the two fields below are about (the current one); null when there is none yet. */
  sessionId: Schema.NullOr(Schema.String),
  /** Messages of that session no summary covers yet (the recent ones always; many when summaries lag). */
  lagMessages: Schema.Number,
  /** Its raw window starts past the summarized messages (cut at user messages to fit the window). */
  fallbackCut: Schema.Boolean
})
export type SummarizerStatus = typeof SummarizerStatus.Type

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

/** What the status needs of the summarizer's health (SummarizerHealth; this module stays free of the Node side, for the web UI's types). */
interface Health {
  readonly consecutiveFailures: number
  readonly lastError: string | null
  readonly lastFailureAtMs: number | null
  readonly lastSuccessAtMs: number | null
  readonly nextAttemptAtMs: number | null
}

export interface StatusInput {
  readonly enabled: boolean
  readonly health: Health
  readonly sessionId: string | null
  readonly messages: number
  /** The end of the session's contiguous summarized prefix. */
  readonly coveredEnd: number
  readonly fallback: boolean
}

export const summarizerStatus = (input: StatusInput): SummarizerStatus => {
  const { health } = input
  const waiting = health.consecutiveFailures > 0 && health.nextAttemptAtMs !== null
  return {
    state: !input.enabled ? "off" : health.consecutiveFailures > 0 ? "failing" : "ok",
    lastSuccessAt: iso(health.lastSuccessAtMs),
    consecutiveFailures: health.consecutiveFailures,
    lastError: health.lastError,
    lastFailureAt: iso(health.lastFailureAtMs),
    nextAttemptAt: waiting ? iso(health.nextAttemptAtMs) : null,
    sessionId: input.sessionId,
    lagMessages: input.enabled ? Math.max(0, input.messages - input.coveredEnd) : 0,
    fallbackCut: input.fallback
  }
}

/** One line for `kern status`. */
export const summarizerLine = (status: SummarizerStatus): string => {
  if (status.state === "off") return "off (summaryBudget 0: the window is cut at user messages)"
  const last = status.lastSuccessAt === null ? "no summary yet" : `last summary ${status.lastSuccessAt}`
  const lag = `${status.lagMessages} message${status.lagMessages === 1 ? "" : "s"} not summarized yet`
  const fallback = status.fallbackCut ? "; fallback cut in effect (older messages cut at user messages, recall keeps them)" : ""
  if (status.state === "ok") return `ok, ${last}; ${lag}${fallback}`
  const next = status.nextAttemptAt === null ? "" : `, next attempt after ${status.nextAttemptAt}`
  return `failing (${status.consecutiveFailures} in a row${next}): ${status.lastError ?? "no error recorded"}; ${last}; ${lag}${fallback}`
}

