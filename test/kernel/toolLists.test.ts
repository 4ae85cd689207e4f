import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as NodePath from "node:path"
import { loadConfig } from "../../src/config/AgentConfig.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { ToolSpec } from "../../src/kernel/contracts.js"
import { evaluate, type PolicyRules } from "../../src/kernel/ToolPolicy.js"
import { matchesToolPattern } from "../../src/kernel/toolPatterns.js"
import { unknownToolNames } from "../../src/tools/toolListNames.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const spec = (toolId: string, safetyClass: ToolSpec["safetyClass"] = "READ_ONLY") =>
  Schema.decodeUnknownSync(ToolSpec)({ toolId, name: toolId, safetyClass })

const rules = (lists: { readonly allow?: ReadonlyArray<string>; readonly block?: ReadonlyArray<string> }): PolicyRules => ({
  mode: "normal",
  blockedTools: new Set(lists.block),
  allowedTools: new Set(lists.allow)
})

const verdict = (lists: Parameters<typeof rules>[0], toolId: string, safetyMode: "NORMAL" | "SAFE" | "STRICT" = "NORMAL") =>
  evaluate(rules(lists), spec(toolId, toolId === "webfetch" ? "NETWORK" : "READ_ONLY"), "agent", safetyMode)._tag

describe("tool patterns", () => {
  // [pattern, tool id, matches]
  const cases: ReadonlyArray<readonly [string, string, boolean]> = [
    ["webfetch", "webfetch", true],
    ["webfetch", "webfetch2", false],
    ["webfetc", "webfetch", false],
    ["mcp.github.*", "mcp.github.create_issue", true],
    ["mcp.github.*", "mcp.github.", true],
    ["mcp.github.*", "mcp.githubx.create_issue", false],
    ["mcp.github.*", "mcp.gitlab.create_issue", false],
    ["mcp.*", "mcp.slack.post", true],
    ["mcp.*", "read", false],
    ["*", "bash", true],
    ["mcp.*.delete_*", "mcp.github.delete_repo", true],
    ["mcp.*.delete_*", "mcp.github.create_repo", false],
    ["*_stats", "context_budget_stats", true],
    ["*_stats", "context_budget_stats_x", false],
    ["a*a", "a", false],
    ["a*a", "aa", true],
    ["re*ad", "read", true],
    ["g*", "glob", true],
    ["g*", "bash", false]
  ]
  for (const [pattern, toolId, expected] of cases) {
    it(`${pattern} ${expected ? "matches" : "does not match"} ${toolId}`, () => {
      assert.strictEqual(matchesToolPattern(pattern, toolId), expected)
    })
  }

  it("the policy denies what block matches and, with allow, whatever allow does not; block wins", () => {
    assert.strictEqual(verdict({ block: ["webfetch"] }, "webfetch"), "Deny")
    assert.strictEqual(verdict({ block: ["webfetch"] }, "read"), "Allow")
    assert.strictEqual(verdict({ block: ["mcp.github.*"] }, "mcp.github.delete_repo"), "Deny")
    assert.strictEqual(verdict({ block: ["mcp.github.*"] }, "mcp.slack.post"), "Allow")
    assert.strictEqual(verdict({ allow: ["read", "g*"] }, "glob"), "Allow")
    assert.strictEqual(verdict({ allow: ["read", "g*"] }, "recall"), "Deny")
    assert.strictEqual(verdict({ allow: ["read", "g*"], block: ["grep"] }, "grep"), "Deny")
    // SAFE and STRICT still deny what is not read-only, whatever the allow list says.
    assert.strictEqual(verdict({ allow: ["webfetch"] }, "webfetch", "SAFE"), "Deny")
    assert.strictEqual(verdict({ allow: ["webfetch"] }, "webfetch", "STRICT"), "Deny")
  })
})

describe("config tools { allow, block }", () => {
  const load = (tools: unknown) => {
    const dir = NodePath.join(makeTempDir(), "atlas")
    writeFiles(dir, { ".kern/config.json": JSON.stringify({ tools }) })
    return loadConfig(dir).pipe(Effect.provideService(ProcessEnv, {}), Effect.provide(NodeContext.layer))
  }

  it.effect("decodes the lists; block defaults to none and allow to everything", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual((yield* load({ block: ["webfetch", "mcp.github.*"] })).config.tools, { block: ["webfetch", "mcp.github.*"] })
      assert.deepStrictEqual((yield* load({ allow: ["read"] })).config.tools, { allow: ["read"], block: [] })
      assert.deepStrictEqual((yield* load(undefined)).config.tools, { block: [] })
    }))

  for (const bad of [{ block: "webfetch" }, { block: ["Web Fetch"] }, { allow: [] }, { block: [""] }, { allow: [42] }, ["webfetch"]]) {
    it.effect(`refuses ${JSON.stringify(bad)} with an error naming tools`, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(load(bad))
        assert.include(error.message, "tools")
      }))
  }

  it("warns about names that match no tool, with the likely one; MCP servers' tools and real ids pass", () => {
    const known = ["read", "bash", "webfetch", "glob", "grep"]
    const warnings = unknownToolNames(
      { allow: ["read", "raed", "g*", "mcp.github.*"], block: ["webfech", "mcp.nosuch.*", "zz*"] },
      { github: {} },
      known
    )
    assert.deepStrictEqual(warnings, [
      "tools.allow: \"raed\" names no tool (did you mean \"read\"?); tool ids are listed by `kern kernel tools`",
      "tools.block: \"webfech\" names no tool (did you mean \"webfetch\"?); tool ids are listed by `kern kernel tools`",
      "tools.block: \"mcp.nosuch.*\" names no tool; tool ids are listed by `kern kernel tools`",
      "tools.block: \"zz*\" names no tool; tool ids are listed by `kern kernel tools`"
    ])
  })
})
