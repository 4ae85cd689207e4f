import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import bpeRanks from "gpt-tokenizer/bpeRanks/o200k_base"
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { bpeCounter } from "../../src/model/bpeCount.js"
import { buildRankTable, deserializeRankTable, serializeRankTable } from "../../src/model/bpeTable.js"

const table = buildRankTable(bpeRanks)
const count = bpeCounter(table)
// Through the file the build writes: the counts must not depend on which table is used.
const fromFile = bpeCounter(deserializeRankTable(serializeRankTable(table))!)

/** gpt-tokenizer's answer with no special token disallowed (a special token's spelling counted as text): its count, or why it failed. */
const reference = (text: string): number | string => {
  try {
    return countTokens(text, { disallowedSpecial: new Set() })
  } catch (error) {
    return (error as Error).message
  }
}
const ours = (counter: (text: string) => number, text: string): number | string => {
  try {
    return counter(text)
  } catch (error) {
    return (error as Error).message
  }
}

const corpus = [
  "",
  "hi",
  "hello world",
  "Recall finds every past conversation; the agent remembers. ".repeat(40),
  "question 12: what changed in the router config since yesterday, and does DNS still resolve the pi?",
  "DHCP range .100-.200 (moved 3 days ago); static leases for the printer, the NAS and the pi\nDNS: 192.168.1.2",
  "漢字とかなの文章、句読点も。".repeat(5),
  "Ünïcödé façade — naïve café; Straße, ǅ, ﬁ ligature, Ⅻ, ½, ٣٤٥",
  "emoji 👩‍👩‍👧‍👦 🇫🇷 🏳️‍🌈 and flags",
  "mixed\r\n\r\nline\rends\n\n\n   indented\t\ttabs  \u00a0nbsp\u2028sep\u3000ideographic",
  "\u0000\u0001\u0007\u001b[31mred\u001b[0m\u007f",
  "lone \ud800 high, lone \udc00 low, reversed \udc00\ud800, pair \ud83d\ude00",
  "\ufeffBOM and \ufffd replacement",
  "numbers 1234567890 3.14159 -42 1e10 0x1F 1,000,000",
  "it's they're we've I'm you'll he'd IT'S THEY'RE",
  `{"json": [1, 2, {"nested": "value"}], "url": "https://example.com/a?b=c&d=e#f"}`,
  "function f(x) { return x => x * 2; } // comment /* block */",
  "x".repeat(300),
  " ".repeat(300),
  "ab".repeat(500),
  "<|endoftext|>",
  "before <|im_start|>system<|im_end|> after",
  "<|fim_prefix|><|endofprompt|>",
  "<|endoftext| almost <|notatoken|>",
  "ǰ̸̡̛͇̦̹͙̗͚̫͕̺͚̞͙̅̉̎̈́͂̂̚ẓ̴̢̝̙̜̋̐̈́a̷̺̟͔̫͊͑̓̈́̓͝l̴̡̳̩̲̹͌̈́g̵̰̲̿ǒ̸̘̰͂"
]

describe("bpeCount", () => {
  it("counts as gpt-tokenizer's countTokens over a corpus", () => {
    for (const text of corpus) {
      expect(ours(count, text), JSON.stringify(text)).toEqual(reference(text))
      expect(ours(fromFile, text), JSON.stringify(text)).toEqual(reference(text))
    }
  })

  it("counts a special token's spelling as the text it is, where gpt-tokenizer's default throws (a chat message may hold it)", () => {
    expect(() => countTokens("say <|endoftext|> please")).toThrow(/Disallowed special token/)
    expect(count("say <|endoftext|> please")).toBe(countTokens("say <|endoftext|> please", { disallowedSpecial: new Set() }))
    expect(count("<|endoftext|>")).toBeGreaterThan(1)
  })

  it("counts as countTokens over generated text: any code units, full Unicode, words and spaces", () => {
    const words = fc.array(
      fc.oneof(
        fc.constantFrom("the", " the", "The", "'s", "'LL", "\n", "\r\n", "  ", "\t", "1", "123456", ".", "!!", "é", "漢", "👍", "<|", "|>", "endoftext"),
        fc.string({ unit: "grapheme", maxLength: 8 }),
        fc.string({ unit: "binary", maxLength: 8 })
      ),
      { maxLength: 40 }
    ).map((parts) => parts.join(""))
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary", maxLength: 200 }), fc.string({ unit: "grapheme-composite", maxLength: 100 }), words), (text) => {
        expect(ours(count, text)).toEqual(reference(text))
      }),
      { numRuns: 3_000 }
    )
  })

  it("counts as countTokens over the repository's own text (sources and docs)", () => {
    const root = NodePath.resolve(import.meta.dirname, "../..")
    const files = ["README.md", "src/model/bpeTable.ts", "src/context/ContextWindow.ts", "src/session/parse.ts"]
    for (const file of files) {
      const text = NodeFs.readFileSync(NodePath.join(root, file), "utf8")
      expect(count(text), file).toBe(countTokens(text, { disallowedSpecial: new Set() }))
    }
  })

  it("reads no table from a file that is not one: damaged, cut short, another layout", () => {
    const file = serializeRankTable(table)
    expect(deserializeRankTable(file)).toBeDefined()
    // Not on a 4-byte boundary: read from an aligned copy.
    const shifted = new Uint8Array(file.byteLength + 1)
    shifted.set(file, 1)
    expect(bpeCounter(deserializeRankTable(shifted.subarray(1))!)("hello world")).toBe(2)
    const damaged = Uint8Array.from(file)
    damaged[damaged.length - 10] = damaged[damaged.length - 10]! ^ 0xff
    expect(deserializeRankTable(damaged)).toBeUndefined()
    expect(deserializeRankTable(file.subarray(0, file.length - 4))).toBeUndefined()
    expect(deserializeRankTable(new Uint8Array(3))).toBeUndefined()
    const otherVersion = Uint8Array.from(file)
    otherVersion[4] = 99
    expect(deserializeRankTable(otherVersion)).toBeUndefined()
  })

  it("refuses ranks its lookups could not answer as gpt-tokenizer does", () => {
    // Bytes that are valid UTF-8 are looked up by text: gpt-tokenizer never finds them given as bytes, nor does the table.
    expect(bpeCounter(buildRankTable(["a", "b", [0x61, 0x62]]))("ab")).toBe(2)
    expect(() => buildRankTable(["a", [0xff], [0xff]])).toThrow(/repeats/)
    expect(() => buildRankTable(["a", "\ud800"])).toThrow(/well-formed/)
    // Two ranks with the same text: gpt-tokenizer's Map keeps the later one.
    const twice = buildRankTable(["a", "b", "a"])
    expect(twice.ranks.length).toBe(2)
  })
})
