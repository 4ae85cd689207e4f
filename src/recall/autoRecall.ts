import { Prompt } from "@effect/ai"
import { type TokenCounter, tokensUpTo } from "../model/tokenizer.js"
import { isExcluded } from "./fusion.js"
import type { RecallExclude, RecallHit } from "./schema.js"

/** Hits auto-recall keeps at most, best first, of those within the distance cut (before the token cap). */
export const autoRecallCandidates = 3
/**
 * Hits auto-recall asks the search for: the distance cut comes after the fusion, where keyword matches far in
 * meaning can outrank a near hit, so the first 3 fused hits alone would lose it.
 */
export const autoRecallSearchLimit = 10

export interface AutoRecallOptions {
  /** `autoRecall` in config. */
  readonly enabled: boolean
  /** Whether messages were trimmed from the context this turn: only then can the model have lost something. */
  readonly trimmed: boolean
  /** `autoRecallMaxDistance`: hits farther than this (cosine distance) are not worth the tokens. */
  readonly maxDistance: number
  /** `autoRecallTokens`: the block's budget. */
  readonly maxTokens: number
}

export interface AutoRecall {
  readonly query: string
  readonly hits: ReadonlyArray<RecallHit>
  readonly tokens: number
  /** The `<recall>` block placed before the newest user message. */
  readonly block: string
}

/** Whether this turn runs auto-recall at all (and so whether a search is worth making). */
export const wantsAutoRecall = (options: Pick<AutoRecallOptions, "enabled" | "trimmed">, query: string): boolean =>
  options.enabled && options.trimmed && query.trim() !== ""

const renderHit = (hit: RecallHit): string => {
  const where = hit.source === "session"
    ? `session="${hit.sessionId}" messages="${hit.messageStart}-${hit.messageEnd}"`
    : `file="${hit.path}"`
  return `<hit ${where} time="${hit.startedAt}">\n${hit.text}\n</hit>`
}

const open = "<recall note=\"from earlier conversations, found for the message below; not part of it\">"
const close = "</recall>"

/**
 * Chooses what auto-recall adds: the top 3 hits within `maxDistance` (keyword-only hits have no distance and are
 * not taken), skipping those already in the context, then, best first, each hit whose text still fits in
 * `maxTokens` (one too long is skipped, not the rest with it). Undefined when nothing qualifies or the turn
 * does not want it.
 */
export const selectAutoRecall = (
  options: AutoRecallOptions,
  query: string,
  hits: ReadonlyArray<RecallHit>,
  inContext: ReadonlyArray<RecallExclude>,
  count: TokenCounter
): AutoRecall | undefined => {
  if (!wantsAutoRecall(options, query)) return undefined
  const candidates = hits
    .filter((hit) => hit.distance !== null && hit.distance <= options.maxDistance && !isExcluded(hit, inContext))
    .slice(0, autoRecallCandidates)
  const frame = tokensUpTo(`${open}\n${close}`, options.maxTokens, count)
  const kept: Array<RecallHit> = []
  let tokens = frame
  for (const hit of candidates) {
    const cost = tokensUpTo(renderHit(hit), options.maxTokens, count) + 1
    if (tokens + cost > options.maxTokens) continue
    kept.push(hit)
    tokens += cost
  }
  if (kept.length === 0) return undefined
  return { query, hits: kept, tokens, block: [open, ...kept.map(renderHit), close].join("\n") }
}

/**
 * The prompt with the block as the first part of the newest user message: after everything a provider caches (the
 * system prompt and the history before this message stay byte for byte the same), and in a copy, so the session's
 * history never holds it.
 */
export const withRecallBlock = (messages: ReadonlyArray<Prompt.Message>, block: string): Array<Prompt.Message> => {
  const out = [...messages]
  for (let i = out.length - 1; i >= 0; i--) {
    const message = out[i]!
    if (message.role !== "user") continue
    const part = Prompt.makePart("text", { text: block })
    out[i] = Prompt.makeMessage("user", { content: [part, ...message.content] })
    return out
  }
  return out
}
