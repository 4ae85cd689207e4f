// A model call's token counts, the same whichever provider answered. @effect/ai's Usage has no field for prompt
// cache writes, and the providers disagree on what "input tokens" means:
// - OpenAI and Chat Completions servers count every prompt token in `inputTokens`, cached ones included; kern's
//   Chat Completions model puts cache writes in the finish part's metadata (`cacheWriteMetadata`).
// - @effect/ai-anthropic passes Anthropic's `input_tokens` through, which leaves out the tokens read from and
//   written to the cache; its finish metadata carries Anthropic's whole usage (`anthropic.usage`).
// kern counts input as every prompt token (what budgets, calibration and prices expect) on all providers.

/** The finish part's metadata for a call that wrote `tokens` to the provider's prompt cache. */
export const cacheWriteMetadata = (tokens: number) => ({ chatCompletions: { cacheWriteTokens: tokens } })

/** What a finish part carries, decoded (`Response.FinishPart`) or as kern's own model sends it (encoded). */
export interface FinishLike {
  readonly usage?: {
    readonly inputTokens?: number | undefined
    readonly outputTokens?: number | undefined
    readonly cachedInputTokens?: number | undefined
  } | undefined
  readonly metadata?: unknown
}

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null

const numberAt = (record: unknown, key: string): number | undefined => {
  if (!isRecord(record)) return undefined
  const value = record[key]
  return typeof value === "number" && Number.isFinite(value) ? value : undefined
}

const memberOf = (record: unknown, key: string): unknown => (isRecord(record) ? record[key] : undefined)

/**
 * A call's tokens: every prompt token in `inputTokens`, of which `cachedInputTokens` were read from the cache and
 * `cacheWriteTokens` written to it.
 */
export interface CallTokens {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cachedInputTokens: number
  readonly cacheWriteTokens: number
}

export const finishUsage = (part: FinishLike): CallTokens => {
  const outputTokens = part.usage?.outputTokens ?? 0
  const anthropic = memberOf(memberOf(part.metadata, "anthropic"), "usage")
  const uncached = numberAt(anthropic, "input_tokens")
  if (uncached !== undefined) {
    const cachedInputTokens = numberAt(anthropic, "cache_read_input_tokens") ?? 0
    const cacheWriteTokens = numberAt(anthropic, "cache_creation_input_tokens") ?? 0
    const inputTokens = uncached + cachedInputTokens + cacheWriteTokens
    return { inputTokens, outputTokens, cachedInputTokens, cacheWriteTokens }
  }
  return {
    inputTokens: part.usage?.inputTokens ?? 0,
    outputTokens,
    cachedInputTokens: part.usage?.cachedInputTokens ?? 0,
    cacheWriteTokens: numberAt(memberOf(part.metadata, "chatCompletions"), "cacheWriteTokens") ?? 0
  }
}
