// o200k_base token counts over the flat rank table (bpeTable.ts), the same as gpt-tokenizer's `countTokens` with no
// special token disallowed, for every text (test/model/bpeCount.test.ts compares them over a corpus, hostile text
// included): the same pre-token pattern, the same whole-piece lookup by text, the same byte-pair merges (the lowest
// rank first, the first of equals). Only the table it looks ranks up in differs.
//
// A special token's spelling (`<|endoftext|>`) is counted as the text it is, as tiktoken's encode_ordinary does:
// gpt-tokenizer's default throws on it, and a chat message holding it failed its turn with a stack trace, and every
// later turn of that session too, since the message stays in the session and is counted again.
import { CL_AND_O_TOKEN_SPLIT_PATTERN } from "gpt-tokenizer/encodingParams/constants"
import { isValidUtf8, isWellFormed, rankOf, type RankTable } from "./bpeTable.js"

const encoder = new TextEncoder()

/** The parts a pre-token's bytes merge into (BytePairEncodingCore.bytePairMerge), counted. */
const mergedParts = (table: RankTable, piece: Uint8Array): number => {
  const rank = (from: number, to: number) => {
    const found = rankOf(table, piece, from, to, isValidUtf8(piece, from, to) ? 0 : 1)
    return found === -1 ? Infinity : found
  }
  // starts[i]: where part i begins (the last is the end); ranks[i]: the rank of parts i and i + 1 merged.
  const starts: Array<number> = []
  const ranks: Array<number> = []
  for (let i = 0; i <= piece.length; i++) {
    starts.push(i)
    ranks.push(i < piece.length - 1 ? rank(i, i + 2) : Infinity)
  }
  while (starts.length > 1) {
    let lowest = Infinity
    let at = -1
    for (let i = 0; i < ranks.length - 1; i++) {
      if (ranks[i]! < lowest) {
        lowest = ranks[i]!
        at = i
      }
    }
    if (at === -1) break
    starts.splice(at + 1, 1)
    ranks.splice(at, 1)
    ranks[at] = at + 2 < starts.length ? rank(starts[at]!, starts[at + 2]!) : Infinity
    if (at > 0) ranks[at - 1] = at + 1 < starts.length ? rank(starts[at - 1]!, starts[at + 1]!) : Infinity
  }
  return starts.length - 1
}

/**
 * The counting function over `table`: a text's o200k_base tokens. A pre-token that is a token of its own counts one;
 * any other is merged pair by pair. Counts of pre-tokens are remembered (`cacheSize` at most), as gpt-tokenizer
 * remembers their merges.
 */
export const bpeCounter = (table: RankTable, cacheSize = 100_000): (text: string) => number => {
  const merged = new Map<string, number>()
  const countPiece = (piece: string): number => {
    const known = merged.get(piece)
    if (known !== undefined) return known
    const bytes = encoder.encode(piece)
    // gpt-tokenizer looks the whole piece up by its text, which a piece with a lone surrogate never matches.
    const whole = isWellFormed(piece) ? rankOf(table, bytes, 0, bytes.length, 0) : -1
    const count = whole !== -1 ? 1 : mergedParts(table, bytes)
    if (merged.size >= cacheSize) merged.delete(merged.keys().next().value!)
    merged.set(piece, count)
    return count
  }
  return (text: string) => {
    let count = 0
    for (const [piece] of text.matchAll(CL_AND_O_TOKEN_SPLIT_PATTERN)) count += countPiece(piece)
    return count
  }
}
