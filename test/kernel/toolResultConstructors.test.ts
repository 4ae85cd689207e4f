import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { AgentCapabilities, ToolProvenance, ToolResult } from "../../src/index.js"

describe("seed 002's ToolResult constructors, from the library entry", () => {
  it("ToolResult.ok carries the data, success and what the options give", () => {
    const result = ToolResult.ok("myagent.do_thing", { items: [1, 2, 3] }, { latencyMs: 12.5 })
    assert.isTrue(result.success)
    assert.deepStrictEqual(result.data, { items: [1, 2, 3] })
    assert.strictEqual(result.latencyMs, 12.5)
    assert.strictEqual(result.retries, 0)
    assert.isUndefined(result.errorCode)
    const sourced = ToolResult.ok("myagent.read", { content: "…" }, { provenance: new ToolProvenance({ sourceUri: "vault/notes.md", freshnessS: 60 }) })
    assert.strictEqual(sourced.provenance?.sourceUri, "vault/notes.md")
  })

  it("ToolResult.error carries the code and the message, and no data", () => {
    const result = ToolResult.error("myagent.do_thing", "NOT_FOUND", "resource missing")
    assert.isFalse(result.success)
    assert.strictEqual(result.errorCode, "NOT_FOUND")
    assert.strictEqual(result.errorMessage, "resource missing")
    assert.isNull(result.data)
    // Both encode as any other ToolResult.
    assert.deepInclude(Schema.encodeSync(ToolResult)(result), { toolId: "myagent.do_thing", success: false })
  })

  it("AgentCapabilities decodes the seed's declaration with its defaults", () => {
    const caps = Schema.decodeUnknownSync(AgentCapabilities)({
      agentName: "meeting_copilot",
      toolAllowlist: ["meeting.extract_action_items"]
    })
    assert.strictEqual(caps.safetyClassCeiling, "READ_ONLY")
    assert.deepStrictEqual(caps.toolAllowlist, ["meeting.extract_action_items"])
  })
})
