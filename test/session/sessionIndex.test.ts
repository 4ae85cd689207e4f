import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, FastCheck as fc, Schema } from "effect"
import { RecordJson, recordJson, SessionRecord } from "../../src/session/SessionIndex.js"

// A count record is written on every append with JSON made directly (SessionIndex.ts recordJson): it must be the
// text the record's Schema encodes, or a reader that decodes it through that Schema would refuse it.
const encode = Schema.encodeSync(RecordJson)
const decode = Schema.decodeUnknownSync(RecordJson)

describe("a session's count record", () => {
  it("its JSON is the Schema's encoding, byte for byte (property)", () => {
    const records = Arbitrary.make(Schema.typeSchema(SessionRecord))
    fc.assert(
      fc.property(records, fc.string(), (record, check) => {
        const { sessionId: _, ...counts } = record
        const text = recordJson(counts, check)
        assert.strictEqual(text, encode({ ...counts, check }))
        // A reader decodes it through the Schema (JSON has no -0, NaN nor Infinity: what it decodes encodes the same).
        if (Object.values(counts).every((value) => typeof value !== "number" || Number.isFinite(value))) {
          assert.strictEqual(encode(decode(text)), text)
        }
      }),
      { numRuns: 500 }
    )
  })

  it("odd values encode as the Schema encodes them", () => {
    for (const counts of [
      { createdAt: "", messages: 0, bytes: -0, mtimeMs: Number.NaN },
      { createdAt: "\"\\\n\u2028</script>", messages: Number.MAX_SAFE_INTEGER, bytes: 1e21, mtimeMs: Number.POSITIVE_INFINITY },
      { createdAt: "2026-11-28T01:00:00.000Z", messages: 1.5, bytes: 12, mtimeMs: 1_795_829_611_900 }
    ]) {
      assert.strictEqual(recordJson(counts, "abc"), encode({ ...counts, check: "abc" }))
    }
  })
})
