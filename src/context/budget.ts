import type { KernConfig } from "../config/schema.js"

/** How the context window is shared, in tokens as kern counts them (the model's calibration already applied). */
export interface ContextBudget {
  readonly maxContextTokens: number
  /** What is left for the conversation once the system prompt and the tool definitions are in. */
  readonly conversation: number
  /** `summaryBudget` of it, for the conversation summary. */
  readonly summary: number
  /** The rest, for raw messages: the trim keeps them within it (with hysteresis). */
  readonly raw: number
}

/**
 * `maxContextTokens` less the system prompt and the tool definitions; `summaryBudget` of the rest for summaries,
 * the remainder for raw messages. `ratio` is the model's count over ours: a model that counts 10% more gets a
 * window 10% smaller in our tokens.
 */
export const contextBudget = (
  config: Pick<KernConfig, "maxContextTokens" | "summaryBudget">,
  systemTokens: number,
  toolsTokens: number,
  ratio: number
): ContextBudget => {
  const conversation = Math.max(0, Math.floor(config.maxContextTokens / ratio) - systemTokens - toolsTokens)
  const summary = Math.floor(conversation * config.summaryBudget)
  return { maxContextTokens: config.maxContextTokens, conversation, summary, raw: conversation - summary }
}
