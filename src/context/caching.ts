import type { Prompt } from "@effect/ai"

// Prompt caching for Anthropic models. Anthropic caches a prompt's prefix up to each block marked
// `cache_control: ephemeral` (at most 4 marks a request) and finds an earlier write only within about 20 blocks
// before a mark. So the marks go where the prefix stays the same from request to request: the system prompt (tools
// and instructions), a mid-history message that moves only every `breakpointStride` messages (a long tool-heavy turn
// still finds the prefix it wrote 20 messages ago), and the last user message (the steps of one turn share
// everything up to it).

/** Anthropic accepts at most this many cache breakpoints in one request. */
export const maxBreakpoints = 4

/** The mid-history breakpoint sits at (or just before) a multiple of this many messages. */
export const breakpointStride = 20

/** The mark @effect/ai-anthropic reads from a message's options, and kern's Chat Completions encoder too. */
export const ephemeral = { type: "ephemeral" } as const

/** Prompt caching is worth marking for: Anthropic itself, or an Anthropic model behind a router (OpenRouter). */
export const promptCachingApplies = (provider: string, model: string): boolean =>
  provider === "anthropic" || model.toLowerCase().startsWith("anthropic/")

const lastUserAtOrBefore = (messages: ReadonlyArray<Prompt.Message>, from: number): number => {
  for (let i = Math.min(from, messages.length - 1); i >= 0; i--) {
    if (messages[i]!.role === "user") return i
  }
  return -1
}

/**
 * Indices of the messages to mark, ascending: the system message (when first), the mid-history breakpoint and the
 * last user message. The mid one is the last user message at or before the highest multiple of
 * `breakpointStride` below the message count, so it stays on the same message while the history grows by fewer
 * than 20 messages. Marks land on user messages only: every provider can carry one there (an assistant message
 * that only calls tools has no text block to carry it).
 */
export const cacheBreakpoints = (messages: ReadonlyArray<Prompt.Message>): ReadonlyArray<number> => {
  const n = messages.length
  if (n === 0) return []
  const marks: Array<number> = []
  if (messages[0]!.role === "system") marks.push(0)
  const lastUser = lastUserAtOrBefore(messages, n - 1)
  const snapped = Math.floor((n - 1) / breakpointStride) * breakpointStride
  const mid = snapped > 0 ? lastUserAtOrBefore(messages, snapped) : -1
  // On the last user message (or the first message) a mid mark would only repeat a mark.
  if (mid > 0 && mid < lastUser && !marks.includes(mid)) marks.push(mid)
  if (lastUser >= 0 && !marks.includes(lastUser)) marks.push(lastUser)
  return marks.slice(0, maxBreakpoints)
}

const markedOptions = (options: Prompt.ProviderOptions) => ({
  ...options,
  anthropic: { ...options["anthropic"], cacheControl: ephemeral }
})

const marked = (message: Prompt.Message): Prompt.Message => ({ ...message, options: markedOptions(message.options) })

/**
 * The messages with `cacheBreakpoints` marked in their options (`options.anthropic.cacheControl`). Only the marked
 * messages are copied; the others are the same values, so encoders that cache per message keep their work.
 */
export const withCacheBreakpoints = (messages: ReadonlyArray<Prompt.Message>): Array<Prompt.Message> => {
  const out = messages.slice()
  for (const index of cacheBreakpoints(messages)) out[index] = marked(messages[index]!)
  return out
}
