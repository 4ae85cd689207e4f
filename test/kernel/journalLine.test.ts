import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { type EventFields, lineAt, valuesAt } from "../../src/kernel/eventRows.js"
import { argsDigest, canonicalJson, sha256 } from "../../src/kernel/fingerprint.js"

// Texts as a model, a tool or an error message may give them: quotes, backslashes, control characters, emoji and
// lone surrogates (which JSON.stringify writes escaped) among ordinary ones.
const text = fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.constantFrom("", "\"", "\\", "\n", "\u2028", "\ud800", "a\udc00b", "😀"))
const maybeText = fc.option(text, { nil: undefined }).chain((value) => fc.constantFrom(value, null))
const maybeNumber = fc.option(fc.oneof(fc.double(), fc.integer(), fc.constantFrom(-0, NaN, Infinity, 1e21)), { nil: undefined })
  .chain((value) => fc.constantFrom(value, null))

const eventFields: fc.Arbitrary<Omit<EventFields, "tsMs">> = fc.record({
  decisionKey: text,
  runId: text,
  traceId: text,
  sessionId: fc.option(text, { nil: undefined }),
  toolId: maybeText,
  argsDigest: maybeText,
  status: text,
  errorCode: maybeText,
  errorMessage: maybeText,
  latencyMs: maybeNumber,
  retries: maybeNumber,
  contractFingerprint: maybeText,
  registeredFingerprint: maybeText,
  contractStatus: maybeText,
  contractEnforcement: maybeText,
  contractMismatch: fc.constantFrom(undefined, null, true, false),
  detail: maybeText
})

describe("an audit event's journal line", () => {
  it("is the JSON of its values, newline ended, whatever its texts and numbers hold", () => {
    fc.assert(
      fc.property(eventFields, fc.integer({ min: 0, max: 2 ** 52 }), maybeText, maybeText, (event, tsMs, errorMessage, detail) => {
        expect(lineAt(event, tsMs, errorMessage, detail)).toBe(`${JSON.stringify(valuesAt(event, tsMs, errorMessage, detail))}\n`)
      }),
      { numRuns: 2_000 }
    )
  })
})

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
