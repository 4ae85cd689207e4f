import { assert, describe, it } from "@effect/vitest"
import { Equal, Hash, Schema } from "effect"
import { knownToolResult, ToolProvenance, ToolResult } from "../../src/kernel/contracts.js"

const ids = { callId: "call_0123456789abcdef", traceId: "0123456789abcdef0123456789abcdef", spanId: "0123456789abcdef" }

/** Results of every shape the executor returns: done with any data, failed with a code and a message, refused, sourced. */
const corpus: ReadonlyArray<Parameters<typeof knownToolResult>[0]> = [
  { ...ids, toolId: "t.ok", success: true, data: { items: [1, 2, 3], nested: { a: null } }, latencyMs: 3, retries: 0 },
  { ...ids, toolId: "t.text", success: true, data: "plain text, with \u0000 and \ud83d\ude00", latencyMs: 0, retries: 2 },
  { ...ids, toolId: "t.none", success: true, data: null, latencyMs: 12.5, retries: 0 },
  { ...ids, toolId: "t.fail", success: false, data: null, errorCode: "TIMEOUT", errorMessage: "t.fail timed out after 5000 ms", latencyMs: 5000, retries: 1 },
  { ...ids, toolId: "t.denied", success: false, data: null, errorCode: "PERMISSION_DENIED", errorMessage: "", latencyMs: 0, retries: 0 },
  { ...ids, toolId: "t.src", success: true, data: [0, "x", false], latencyMs: 1, retries: 0, provenance: new ToolProvenance({ sourceUri: "vault/n.md", freshnessS: 60 }) },
  // Field names the class does not know are kept as the constructor keeps them (it validates nothing either).
  { ...ids, toolId: "t.__proto__", success: true, data: { __proto__: { polluted: true }, constructor: "x" }, latencyMs: 1, retries: 0 }
]

describe("knownToolResult", () => {
  it("makes the object `new ToolResult(fields, true)` makes, for every shape of result", () => {
    for (const fields of corpus) {
      const slow = new ToolResult(fields, true)
      const fast = knownToolResult(fields)
      assert.strictEqual(Object.getPrototypeOf(fast), Object.getPrototypeOf(slow), fields.toolId)
      assert.instanceOf(fast, ToolResult)
      assert.deepStrictEqual(Reflect.ownKeys(fast), Reflect.ownKeys(slow), fields.toolId)
      for (const key of Reflect.ownKeys(slow)) assert.strictEqual((fast as never)[key], (slow as never)[key], String(key))
      assert.isTrue(Equal.equals(fast, slow), fields.toolId)
      assert.strictEqual(Hash.hash(fast), Hash.hash(slow), fields.toolId)
      assert.deepStrictEqual(Schema.encodeSync(ToolResult)(fast), Schema.encodeSync(ToolResult)(slow), fields.toolId)
      assert.strictEqual(JSON.stringify(fast), JSON.stringify(slow), fields.toolId)
      assert.isTrue(Schema.is(ToolResult)(fast), fields.toolId)
      // The fields are copied, not shared: a change to the given object does not reach the result.
      assert.notStrictEqual(fast as unknown, fields)
    }
  })
})
