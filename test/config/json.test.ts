import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import * as fc from "fast-check"
import {
  jsonDepthExceeded,
  jsonValueDepthExceeded,
  maxJsonDepth,
  parseJsonBounded,
  parseJsonText,
  parseJsonWith
} from "../../src/config/json.js"

/** The nesting depth of a parsed value, counted the slow, obvious way (the values here are shallow). */
const depthOf = (value: unknown): number =>
  typeof value !== "object" || value === null
    ? 0
    : 1 + Math.max(0, ...Object.values(value as Record<string, unknown>).map(depthOf))

const arrays = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`
const objects = (depth: number) => `${"{\"a\":".repeat(depth)}1${"}".repeat(depth)}`
const mixed = (depth: number) => `${"[{\"k\":".repeat(depth / 2)}null${"}]".repeat(depth / 2)}`

/** Texts nested past the limit, in every form: each is refused without being parsed. */
const tooDeep: ReadonlyArray<readonly [string, string]> = [
  ["arrays, one past the limit", arrays(maxJsonDepth + 1)],
  ["objects, one past the limit", objects(maxJsonDepth + 1)],
  ["arrays, 3,000", arrays(3000)],
  ["objects, 3,000", objects(3000)],
  ["mixed, 3,000", mixed(3000)],
  ["arrays, 100,000", arrays(100_000)],
  ["objects, 100,000", objects(100_000)],
  ["deep inside a wide object", `{"a": 1, "b": [1, 2, {"c": ${arrays(3000)}}], "d": "x"}`],
  ["deep after a string holding brackets and escapes", `["]]]\\"]]", ${arrays(3000)}]`],
  ["opened and never closed", "[".repeat(3000)],
  ["deep and not JSON after", `${"[".repeat(200)}nope`]
]

/** Texts within the limit whose strings hold brackets, quotes and backslashes: parsed as JSON.parse parses them. */
const shallow: ReadonlyArray<readonly [string, string]> = [
  ["at the limit", arrays(maxJsonDepth)],
  ["brackets inside a string", JSON.stringify({ text: "[{".repeat(100_000) })],
  ["an escaped quote before brackets", JSON.stringify(["\"[[[[", "\\", "\\\"{{{{"])],
  ["backslashes at a string's end", JSON.stringify({ a: "\\\\", b: [["\\"]] })],
  ["a lone string", "\"[[[\""],
  ["a number", "42"]
]

describe("depth-checked JSON", () => {
  it("refuses text nested deeper than the limit, naming the depth and where, before parsing it", () => {
    for (const [what, text] of tooDeep) {
      const parsed = parseJsonBounded(text)
      expect(Either.isLeft(parsed), what).toBe(true)
      const error = Either.getLeft(parsed)
      expect(error._tag === "Some" ? error.value : undefined, what).toMatchObject({
        _tag: "JsonTextError",
        reason: "depth",
        message: expect.stringMatching(/^nested more than 100 levels deep \(at character \d+\)$/)
      })
      expect(parseJsonText(text), what).toEqual(Either.left(expect.stringContaining("nested more than 100 levels")))
    }
    // The character named is the bracket that went one level too deep.
    expect(jsonDepthExceeded(`{"a": ${arrays(200)}}`)).toBe(6 + maxJsonDepth - 1)
  })

  it("parses text within the limit exactly as JSON.parse does, brackets inside strings being text", () => {
    for (const [what, text] of shallow) {
      expect(parseJsonBounded(text), what).toEqual(Either.right(JSON.parse(text)))
    }
    expect(Either.getLeft(parseJsonBounded("{\"a\": "))).toMatchObject({ _tag: "Some", value: { reason: "syntax" } })
  })

  it("measures the depth of any JSON text as its parsed value has it", () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 8 }), (value, max) => {
      const text = JSON.stringify(value)
      expect(jsonDepthExceeded(text, max) === undefined).toBe(depthOf(value) <= max)
      expect(jsonValueDepthExceeded(value, max) === undefined).toBe(depthOf(value) <= max)
    }))
  })

  it("measures a parsed value 100,000 deep without overflowing, and names the path to the part too deep", () => {
    const deep = JSON.parse(`{"a": [0, ${arrays(100_000)}]}`)
    const path = jsonValueDepthExceeded(deep)
    expect(path).toHaveLength(maxJsonDepth)
    expect(path?.slice(0, 3)).toEqual(["a", 1, 0])
    expect(jsonValueDepthExceeded({ a: [0, JSON.parse(arrays(98))] })).toBeUndefined()
  })

  it.effect("parseJsonWith is Schema.parseJson with the limit: a ParseError, not a stack overflow", () =>
    Effect.gen(function*() {
      const Body = parseJsonWith(Schema.Struct({ text: Schema.String }))
      expect(yield* Schema.decode(Body)("{\"text\": \"hi\"}")).toEqual({ text: "hi" })
      for (const [what, text] of tooDeep) {
        const error = yield* Effect.flip(Schema.decode(Body)(text))
        expect(error.message, what).toContain("nested more than 100 levels deep")
      }
      expect(yield* Schema.encode(Body)({ text: "hi" })).toBe("{\"text\":\"hi\"}")
    }))
})
