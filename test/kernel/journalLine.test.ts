import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { argsDigest, canonicalJson, sha256 } from "../../src/kernel/fingerprint.js"

/** The straightforward definition canonicalJson is written faster than: every value's keys sorted, through arrays. */
const canonicalReference = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) return `[${value.map(canonicalReference).join(",")}]`
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).filter((key) => record[key] !== undefined).sort()
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalReference(record[key])}`).join(",")}}`
}

describe("the canonical JSON of tool arguments", () => {
  it("is the sorted-keys JSON of the value at every depth (sparse arrays, undefined values, odd keys included)", () => {
    fc.assert(
      fc.property(
        fc.anything({ withSparseArray: true, withNullPrototype: true, withDate: true, withMap: true, withTypedArray: true, withObjectString: true }),
        (value) => {
          expect(canonicalJson(value)).toBe(canonicalReference(value))
        }
      ),
      { numRuns: 5_000 }
    )
  })

  it("gives the digest the audit log has always stored", () => {
    expect(argsDigest({ n: 1 })).toBe(`sha256:${sha256("{\"n\":1}").slice(0, 32)}`)
    expect(argsDigest({ b: [1, { d: undefined, c: "x" }], a: null })).toBe(`sha256:${sha256("{\"a\":null,\"b\":[1,{\"c\":\"x\"}]}").slice(0, 32)}`)
  })
})
