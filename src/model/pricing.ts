import { Option } from "effect"

/** Prices in US dollars per million tokens. */
export interface ModelPrice {
  readonly input: number
  /** Input tokens served from the provider's prompt cache. */
  readonly cachedInput: number
  readonly output: number
  /**
   * Input tokens written to the provider's prompt cache (Anthropic: 1.25× input for the 5-minute cache). Without
   * it, writes cost the input price: providers that cache on their own charge nothing extra.
   */
  readonly cacheWrite?: number | undefined
}

/** Token counts of one model call, as @effect/ai's `Response.Usage` carries them. */
export interface TokenUsage {
  /** All prompt tokens, cached ones included (OpenAI and Chat Completions semantics). */
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
  readonly cachedInputTokens?: number | undefined
  /** Prompt tokens written to the provider's cache, also counted in `inputTokens`. */
  readonly cacheWriteTokens?: number | undefined
}

/**
 * List prices of common models (USD per million tokens, as published by the vendors in 2025). Keys are bare model
 * ids; a provider prefix ("openai/") and a version or date suffix ("-2025-04-14") are ignored when looking up.
 * Override or extend with a record of your own.
 */
export const defaultPrices: Readonly<Record<string, ModelPrice>> = {
  "gpt-5": { input: 1.25, cachedInput: 0.125, output: 10 },
  "gpt-5-mini": { input: 0.25, cachedInput: 0.025, output: 2 },
  "gpt-5-nano": { input: 0.05, cachedInput: 0.005, output: 0.4 },
  "gpt-4.1": { input: 2, cachedInput: 0.5, output: 8 },
  "gpt-4.1-mini": { input: 0.4, cachedInput: 0.1, output: 1.6 },
  "gpt-4.1-nano": { input: 0.1, cachedInput: 0.025, output: 0.4 },
  "gpt-4o": { input: 2.5, cachedInput: 1.25, output: 10 },
  "gpt-4o-mini": { input: 0.15, cachedInput: 0.075, output: 0.6 },
  "o3": { input: 2, cachedInput: 0.5, output: 8 },
  "o4-mini": { input: 1.1, cachedInput: 0.275, output: 4.4 },
  "claude-opus-4": { input: 15, cachedInput: 1.5, cacheWrite: 18.75, output: 75 },
  "claude-opus-4-5": { input: 5, cachedInput: 0.5, cacheWrite: 6.25, output: 25 },
  "claude-sonnet-4": { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
  "claude-haiku-4-5": { input: 1, cachedInput: 0.1, cacheWrite: 1.25, output: 5 },
  "claude-3-7-sonnet": { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
  "claude-3-5-haiku": { input: 0.8, cachedInput: 0.08, cacheWrite: 1, output: 4 },
  "gemini-2.5-pro": { input: 1.25, cachedInput: 0.31, output: 10 },
  "gemini-2.5-flash": { input: 0.3, cachedInput: 0.075, output: 2.5 }
}

// Dots and dashes are one separator: OpenRouter writes "claude-sonnet-4.5" where Anthropic writes "claude-sonnet-4-5".
const normalId = (id: string): string => id.toLowerCase().replace(/\./g, "-")

const bareId = (model: string): string => {
  const slash = model.lastIndexOf("/")
  return normalId((slash === -1 ? model : model.slice(slash + 1)).replace(/:.*$/, ""))
}

/** The longest key that is the id itself or a prefix of it followed by "-" (so "gpt-4.1-mini" beats "gpt-4.1"). */
const longestMatch = (table: Readonly<Record<string, ModelPrice>>, id: string): Option.Option<ModelPrice> => {
  let best: string | undefined
  for (const key of Object.keys(table)) {
    const k = normalId(key)
    if ((id === k || id.startsWith(`${k}-`)) && (best === undefined || k.length > normalId(best).length)) best = key
  }
  return best === undefined ? Option.none() : Option.fromNullable(table[best])
}

/**
 * The price of a model: an override for the exact id (e.g. "openrouter/some-model") first, then overrides and
 * defaults by bare id. None for unknown models (local models cost nothing we can count).
 */
export const priceFor = (
  model: string,
  overrides: Readonly<Record<string, ModelPrice>> = {}
): Option.Option<ModelPrice> => {
  const exact = overrides[model]
  if (exact !== undefined) return Option.some(exact)
  const id = bareId(model)
  return longestMatch(overrides, id).pipe(Option.orElse(() => longestMatch(defaultPrices, id)))
}

/**
 * The cost of one call in US cents: input tokens read from the cache at the cached rate, those written to it at the
 * cache-write rate, the rest at the input rate.
 */
export const costCents = (price: ModelPrice, usage: TokenUsage): number => {
  const input = usage.inputTokens ?? 0
  const cached = Math.min(usage.cachedInputTokens ?? 0, input)
  const written = Math.min(usage.cacheWriteTokens ?? 0, input - cached)
  const output = usage.outputTokens ?? 0
  const dollars = ((input - cached - written) * price.input + cached * price.cachedInput +
    written * (price.cacheWrite ?? price.input) + output * price.output) / 1_000_000
  return dollars * 100
}

/** The cost of one call of `model` in US cents; 0 when the model's price is unknown. */
export const usageCostCents = (
  model: string,
  usage: TokenUsage,
  overrides: Readonly<Record<string, ModelPrice>> = {}
): number => Option.match(priceFor(model, overrides), { onNone: () => 0, onSome: (price) => costCents(price, usage) })

/** Prices as config.json gives them (cached input and cache writes optional) → the table priceFor reads. */
export const priceTable = (
  prices: Readonly<
    Record<string, {
      readonly input: number
      readonly cachedInput?: number | undefined
      readonly cacheWrite?: number | undefined
      readonly output: number
    }>
  >
): Record<string, ModelPrice> =>
  Object.fromEntries(
    Object.entries(prices).map(([id, price]) => [id, { ...price, cachedInput: price.cachedInput ?? price.input }])
  )

/**
 * A cost cap that cannot work: the model has no price (built in or in `prices`), so every call counts 0¢. A local
 * Ollama model costs nothing, so it is not a problem there.
 */
export const costCapProblem = (
  config: {
    readonly provider: string
    readonly model?: string | undefined
    readonly budget: { readonly maxCostUsdCents: number }
    readonly prices: Parameters<typeof priceTable>[0]
  }
): string | undefined =>
  config.model === undefined || config.provider === "ollama" || Option.isSome(priceFor(config.model, priceTable(config.prices)))
    ? undefined
    : `model "${config.model}" has no known price, so the cost cap (budget.maxCostUsdCents ${config.budget.maxCostUsdCents}) ` +
      `counts nothing: add its price under "prices" in .kern/config.json, e.g. { "${config.model}": { "input": 1, "output": 4 } } (0 and 0 for a free local model)`
