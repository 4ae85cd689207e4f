import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"
import bpeRanks from "gpt-tokenizer/bpeRanks/o200k_base"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as NodeUrl from "node:url"
import { bpeCounter } from "../../src/model/bpeCount.js"
import { buildRankTable, serializeRankTable } from "../../src/model/bpeTable.js"
import {
  countBounded,
  maxRunChars,
  rankTableFile,
  rankTablePlaces,
  readRankTable,
  Tokenizer,
  tokensUpTo
} from "../../src/model/tokenizer.js"
import { makeTempDir } from "../support/tempDir.js"

describe("tokenizer", () => {
  it.effect("counts o200k_base tokens, the same text the same way", () =>
    Effect.gen(function*() {
      const count = yield* (yield* Tokenizer).counter
      expect(count("")).toBe(0)
      expect(count("hello world")).toBe(2)
      const text = "Recall finds every past conversation. ".repeat(50)
      expect(count(text)).toBe(count(text))
      expect(count(text)).toBeGreaterThan(200)
      expect(count(text)).toBeLessThan(text.length)
    }).pipe(Effect.provide(Tokenizer.Default)))

  it.effect("counts a message holding a special token's spelling as text, never failing the turn that counts it", () =>
    Effect.gen(function*() {
      const count = yield* (yield* Tokenizer).counter
      const text = "ignore this: <|endoftext|><|im_start|>system"
      expect(count(text)).toBe(countTokens(text, { disallowedSpecial: new Set() }))
    }).pipe(Effect.provide(Tokenizer.Default)))

  it("tokensUpTo counts only when the byte length leaves the limit in doubt, and never under-counts", () => {
    let calls = 0
    const counting = (text: string) => {
      calls++
      return Math.ceil(text.length / 4)
    }
    expect(tokensUpTo("short", 10, counting)).toBe(5)
    expect(calls).toBe(0)
    // Multi-byte characters count by their bytes: an upper bound on tokens, so the bound holds.
    expect(tokensUpTo("ééé", 10, counting)).toBe(6)
    expect(tokensUpTo("x".repeat(40), 10, counting)).toBe(10)
    expect(calls).toBe(1)
  })

  it("counts text without a run longer than maxRunChars exactly, in one piece", () => {
    const pieces: Array<string> = []
    const spy = (text: string) => {
      pieces.push(text)
      return countTokens(text)
    }
    const texts = [
      "Recall finds every past conversation; the agent remembers. ".repeat(2000),
      `${"x".repeat(maxRunChars)} ${" ".repeat(maxRunChars - 1)}y\n`.repeat(20),
      "漢字とかなの文章、句読点も。".repeat(18),
      "short"
    ]
    for (const text of texts) {
      pieces.length = 0
      expect(countBounded(text, spy)).toBe(countTokens(text))
      expect(pieces).toEqual([text])
    }
  })

  it("hands the encoder no run longer than maxRunChars, whatever the text, and stays close to the exact count", () => {
    const longest = (text: string) => {
      let max = 0
      countBounded(text, (piece) => {
        for (const run of piece.match(/\S+|\s+/g) ?? []) max = Math.max(max, run.length)
        return countTokens(piece)
      })
      return max
    }
    const letters = (n: number) => Array.from({ length: n }, (_, i) => "abcdefghijklmnopqrstuvwxyz"[(i * 7919) % 26]).join("")
    const texts = [
      letters(20_000),
      `before ${letters(5_000)} after`,
      " ".repeat(10_000),
      "\n".repeat(10_000),
      "!?".repeat(5_000),
      "漢字".repeat(2_000),
      "😀".repeat(2_000),
      `words, then ${"a".repeat(3_000)}\n${" ".repeat(3_000)}and words again`
    ]
    for (const text of texts) {
      expect(longest(text), text.slice(0, 20)).toBeLessThanOrEqual(maxRunChars + 1)
      const exact = countTokens(text)
      const bounded = countBounded(text, countTokens)
      expect(Math.abs(bounded - exact) / exact, text.slice(0, 20)).toBeLessThan(0.1)
    }
    // A surrogate pair is never cut in two.
    countBounded("😀".repeat(1_000), (piece) => {
      expect(piece.length % 2).toBe(0)
      return countTokens(piece)
    })
  })
})

describe("the rank table's file", () => {
  it("run from the sources, the package's build is looked in after the folder of the code", () => {
    const places = rankTablePlaces().map((url) => NodeUrl.fileURLToPath(url))
    expect(places).toEqual([
      NodePath.resolve("src/model", rankTableFile),
      NodePath.resolve("dist", rankTableFile)
    ])
  })

  it("the first place holding a whole table is read; a missing, torn or foreign file is passed over", () => {
    const dir = makeTempDir("kern-ranks-")
    const table = serializeRankTable(buildRankTable(["a", "b", [0x61, 0x62]]))
    const other = serializeRankTable(buildRankTable(["x", "y"]))
    NodeFs.writeFileSync(NodePath.join(dir, "torn"), table.subarray(0, table.length - 8))
    NodeFs.writeFileSync(NodePath.join(dir, "foreign"), "not a table")
    NodeFs.writeFileSync(NodePath.join(dir, "whole"), table)
    NodeFs.writeFileSync(NodePath.join(dir, "later"), other)
    const at = (...names: ReadonlyArray<string>) => names.map((name) => NodeUrl.pathToFileURL(NodePath.join(dir, name)))
    const read = readRankTable(at("missing", "torn", "foreign", "whole", "later"))
    expect(read === undefined ? undefined : bpeCounter(read)("ab")).toBe(2)
    expect(read?.ranks.length).toBe(3)
    expect(readRankTable(at("missing", "torn", "foreign"))).toBeUndefined()
  })

  it("the package's build holds the table the sources would build: the tests count as a user's kern counts", () =>
    Effect.gen(function*() {
      // Byte for byte: a build left from another version of gpt-tokenizer fails here, not in a count somewhere else.
      const table = buildRankTable(bpeRanks)
      const read = readRankTable([rankTablePlaces()[1]!])
      expect(read === undefined ? undefined : Buffer.from(serializeRankTable(read)).equals(Buffer.from(serializeRankTable(table))))
        .toBe(true)
      const count = yield* (yield* Tokenizer).counter
      const built = bpeCounter(table)
      for (const text of ["hello world", "Recall finds every past conversation.", "日本語のテキスト 🎉", "x".repeat(5000)]) {
        expect(count(text)).toBe(built(text))
      }
    }).pipe(Effect.provide(Tokenizer.Default), Effect.runPromise))
})
