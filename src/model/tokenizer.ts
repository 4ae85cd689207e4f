import { Effect } from "effect"
import * as NodeFs from "node:fs"
import { bpeCounter } from "./bpeCount.js"
import { buildRankTable, deserializeRankTable } from "./bpeTable.js"

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

/**
 * The longest run of non-space (or of space) characters counted in one piece. The encoder splits a text into
 * pre-tokens (words, numbers, punctuation, space runs) and merges each pre-token's bytes pairwise, which is
 * quadratic in its length: a 100,000-character reply without whitespace took a minute, 8 MB half an hour. Runs up to
 * this length (every word of prose) are counted exactly; a longer run is counted in pieces of this length, which may
 * differ from the exact count by a token or so per piece, and makes counting linear in the worst case.
 */
export const maxRunChars = 256

// The characters JavaScript's \s matches, which are the spaces the encoder's pre-tokens split on.
const isSpace = (code: number): boolean =>
  code <= 0x20
    ? code === 0x20 || (code >= 0x09 && code <= 0x0d)
    : code < 0x85
    ? false
    : code === 0x85 || code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) ||
      code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

/**
 * `count` over a text whose runs of space or non-space characters longer than `maxRunChars` are counted in pieces
 * of that length (never splitting a surrogate pair); a text without such a run is counted whole, exactly. One pass
 * over the characters, so the whole count is linear in the text's length.
 */
export const countBounded = (text: string, count: TokenCounter): number => {
  if (text.length <= maxRunChars) return count(text)
  let total = 0
  // Start of the text not yet counted, and of the current run (characters of one kind: space or not).
  let from = 0
  let runStart = 0
  let runSpace = isSpace(text.charCodeAt(0))
  const flush = (runEnd: number) => {
    if (runEnd - runStart <= maxRunChars) return
    if (runStart > from) total += count(text.slice(from, runStart))
    let at = runStart
    while (at < runEnd) {
      let end = Math.min(runEnd, at + maxRunChars)
      if (end < runEnd && isHighSurrogate(text.charCodeAt(end - 1))) end++
      total += count(text.slice(at, end))
      at = end
    }
    from = runEnd
  }
  for (let i = 1; i < text.length; i++) {
    const space = isSpace(text.charCodeAt(i))
    if (space !== runSpace) {
      flush(i)
      runStart = i
      runSpace = space
    }
  }
  flush(text.length)
  return from === 0 ? count(text) : from < text.length ? total + count(text.slice(from)) : total
}

/** Texts whose counts are remembered; the oldest is forgotten first. */
const cacheSize = 4_096

/** The rank table the build writes beside the bundles (scripts/build.mjs). */
export const rankTableFile = "o200k_base.ranks"

/**
 * Where the table may be: beside this code (the bundles), then, when this is kern's source run as it is (the tests,
 * `tsx`), in the package's build beside the sources (`npm install` makes it). Without it each Tokenizer built from the
 * sources spends ~0.4 s building the table: a third of the time of a test that runs an agent.
 */
export const rankTablePlaces = (): ReadonlyArray<URL> => {
  const beside = new URL(rankTableFile, import.meta.url)
  return import.meta.url.endsWith("/src/model/tokenizer.ts")
    ? [beside, new URL(`../../dist/${rankTableFile}`, import.meta.url)]
    : [beside]
}

/** The table in the first of `places` that holds one; a missing, torn or foreign file is passed over. */
export const readRankTable = (places: ReadonlyArray<URL>) => {
  for (const place of places) {
    let file: Uint8Array
    try {
      file = NodeFs.readFileSync(place)
    } catch {
      continue
    }
    const table = deserializeRankTable(file)
    if (table !== undefined) return table
  }
  return undefined
}

/**
 * The o200k_base counter: over the rank table the build wrote (one file read), or, where there is none or it is not
 * one, over the same table built from gpt-tokenizer's ranks (~0.35 s).
 */
const loadCounter = async (): Promise<{ readonly countTokens: TokenCounter }> => {
  const table = readRankTable(rankTablePlaces()) ??
    buildRankTable((await import("gpt-tokenizer/bpeRanks/o200k_base")).default)
  return { countTokens: bpeCounter(table) }
}

/**
 * Token counts with the o200k_base encoding (GPT-4o and later; close enough for other providers' budgets), loaded on
 * first use, not when kern starts; counts of recent texts are cached (a context budget counts the same messages turn
 * after turn).
 */
export class Tokenizer extends Effect.Service<Tokenizer>()("kern/model/Tokenizer", {
  effect: Effect.gen(function*() {
    const encoder = yield* Effect.cached(
      Effect.promise(loadCounter).pipe(Effect.withSpan("kern.model.tokenizer.load"))
    )
    const cache = new Map<string, number>()
    /** The counting function, once the encoder is loaded. */
    const counter: Effect.Effect<TokenCounter> = Effect.map(encoder, (module) => (text: string) => {
      if (text === "") return 0
      const known = cache.get(text)
      if (known !== undefined) return known
      const count = countBounded(text, module.countTokens)
      if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!)
      cache.set(text, count)
      return count
    })
    return { counter } as const
  })
}) {}
