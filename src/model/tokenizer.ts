import { Effect } from "effect"

/** Counts a text's tokens. */
export type TokenCounter = (text: string) => number

/**
 * The text's token count when it may exceed `limit`, else its UTF-8 length: every token covers at least one byte,
 * so a text of n bytes has at most n tokens, and the common "does it fit?" needs no encoding.
 */
export const tokensUpTo = (text: string, limit: number, count: TokenCounter): number => {
  const bytes = Buffer.byteLength(text, "utf8")
  return bytes <= limit ? bytes : count(text)
}

/** Texts whose counts are remembered; the oldest is forgotten first. */
const cacheSize = 4_096

/**
 * Token counts with the o200k_base encoding (GPT-4o and later; close enough for other providers' budgets). The
 * encoder takes ~0.25 s to load, so it is imported on first use, not when kern starts; counts of recent texts are
 * cached (a context budget counts the same messages turn after turn).
 */
export class Tokenizer extends Effect.Service<Tokenizer>()("kern/model/Tokenizer", {
  effect: Effect.gen(function*() {
    const encoder = yield* Effect.cached(
      Effect.promise(() => import("gpt-tokenizer/encoding/o200k_base")).pipe(Effect.withSpan("kern.model.tokenizer.load"))
    )
    const cache = new Map<string, number>()
    /** The counting function, once the encoder is loaded. */
    const counter: Effect.Effect<TokenCounter> = Effect.map(encoder, (module) => (text: string) => {
      if (text === "") return 0
      const known = cache.get(text)
      if (known !== undefined) return known
      const count = module.countTokens(text)
      if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!)
      cache.set(text, count)
      return count
    })
    return { counter } as const
  })
}) {}
