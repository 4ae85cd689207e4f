import { Effect } from "effect"
import { performance } from "node:perf_hooks"
import { Tokenizer } from "../../src/model/tokenizer.js"
import type { Bench } from "./bench.js"

const megabyte = 1_000_000

/** A deterministic generator, so every run measures the same texts. */
const random = (seed: number) => {
  let state = seed
  return () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648
}

const letters = "abcdefghijklmnopqrstuvwxyz"

/**
 * Lower-case letters without a space: one pre-token as long as the text, the encoder's worst case (a model's reply
 * of base64 or a minified blob is close to it).
 */
const whitespaceFree = (chars: number, seed: number): string => {
  const next = random(seed)
  const out: Array<string> = []
  for (let i = 0; i < chars; i++) out.push(letters[Math.floor(next() * letters.length)]!)
  return out.join("")
}

/** Prose: words from a vocabulary of 5,000, common ones more often, with sentences. */
const prose = (chars: number, seed: number): string => {
  const next = random(seed)
  const vocabulary = Array.from({ length: 5000 }, () =>
    Array.from({ length: 2 + Math.floor(next() * 9) }, () => letters[Math.floor(next() * letters.length)]!).join(""))
  const words: Array<string> = []
  let length = 0
  while (length < chars) {
    const word = vocabulary[Math.floor(next() ** 2 * vocabulary.length)]! + (next() < 0.1 ? ". " : " ")
    words.push(word)
    length += word.length
  }
  return words.join("").slice(0, chars)
}

const rounds = 5

/** A new Tokenizer's counter: nothing counted before is remembered. */
const freshCounter = Effect.flatMap(Tokenizer, (tokenizer) => tokenizer.counter).pipe(Effect.provide(Tokenizer.Default))

/**
 * Milliseconds per megabyte to count a text's tokens with a fresh Tokenizer (no count remembered), `rounds` texts
 * of `chars` without whitespace, against as many megabytes of prose: the ratio says how much worse the worst case
 * is than ordinary text, and equal per-megabyte figures at 1 and 8 MB say the count is linear.
 */
const measure = (chars: number) => () =>
  Effect.runPromise(Effect.gen(function*() {
    const samples: Array<number> = []
    const baseline: Array<number> = []
    // The first round warms the encoder and the JIT.
    for (let i = 0; i <= rounds; i++) {
      const worst = whitespaceFree(chars, 1 + i)
      const plain = prose(megabyte, 100 + i)
      const count = yield* freshCounter
      const start = performance.now()
      const tokens = count(worst)
      const ms = performance.now() - start
      const plainCount = yield* freshCounter
      const plainStart = performance.now()
      const plainTokens = plainCount(plain)
      const plainMs = performance.now() - plainStart
      if (tokens < chars / 8 || plainTokens < megabyte / 8) return yield* Effect.die(`counted ${tokens} and ${plainTokens} tokens`)
      if (i > 0) {
        samples.push(ms / (chars / megabyte))
        baseline.push(plainMs)
      }
    }
    return { samples, baseline }
  }))

export const benches: ReadonlyArray<Bench> = [
  { name: "tokens.count.worst.1mb", unit: "ms/MB", run: measure(megabyte) },
  { name: "tokens.count.worst.8mb", unit: "ms/MB", run: measure(8 * megabyte) }
]
