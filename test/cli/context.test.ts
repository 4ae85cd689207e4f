import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { initAgentWithModel } from "../support/agentFolder.js"
import { runKernIn } from "../support/inProcessCli.js"
import { FakeReply, makeWith } from "../support/fakeModelServer.js"
import { writeSessionFixture } from "../support/sessionFixture.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

/** A command in this process: these tests are about what the commands do, not about a process. */
const kern = (args: ReadonlyArray<string>, options: { readonly dir?: string; readonly env?: Record<string, string> } = {}) =>
  Effect.promise(() => runKernIn(options.dir === undefined ? args : [...args, "--dir", options.dir], { env: options.env ?? {} }))

interface SegmentJson {
  readonly id: number
  readonly level: number
  readonly start: number
  readonly end: number
  readonly summary: string | null
  readonly parentId: number | null
  readonly inContext: boolean
}

describe("kern context show, kern segments list|rebuild", () => {
  it.live("rebuild makes the segment tree with the summary model (progress on stderr); list and show read it", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeWith({ fallback: FakeReply.text("The router's DHCP range moved; DNS is on the pi.") })
      const dir = initAgentWithModel(server.baseURL, { maxContextTokens: 20_000, recall: false, embeddingModel: false })
      // ~60 tokens a message: ~180k tokens, a dozen segments of ~15k, so one rollup.
      const sessionId = "20261122-100000-000-beef"
      writeSessionFixture(dir, 3_000, sessionId)

      const empty = (yield* kern(["segments", "list"], { dir, env }))
      expect(empty.status, empty.stderr).toBe(0)
      expect(empty.stdout).toContain(`no segments yet in session ${sessionId} (3,000 messages)`)
      const untrimmed = (yield* kern(["context", "show"], { dir, env }))
      expect(untrimmed.status, untrimmed.stderr).toBe(0)
      expect(untrimmed.stdout).toContain("raw window: every message (nothing trimmed)")

      const rebuilt = yield* kern(["segments", "rebuild"], { dir, env })
      expect(rebuilt.status, rebuilt.stderr).toBe(0)
      expect(rebuilt.stderr).toContain(`rebuilding the segments of session ${sessionId} (3,000 messages)`)
      expect(rebuilt.stderr).toMatch(/summarized \d+ of \d+/)
      expect(rebuilt.stdout).toMatch(/^\d+ segments, 2 levels\n$/)

      const listed = (yield* kern(["segments", "list", "--json"], { dir, env }))
      expect(listed.status, listed.stderr).toBe(0)
      const tree = JSON.parse(listed.stdout) as { sessionId: string; messages: number; cut: number; segments: ReadonlyArray<SegmentJson> }
      expect(tree).toMatchObject({ sessionId, messages: 3_000 })
      const l0 = tree.segments.filter((s) => s.level === 0).sort((a, b) => a.start - b.start)
      const l1 = tree.segments.filter((s) => s.level === 1)
      expect(l0.length).toBeGreaterThanOrEqual(10)
      expect(l0.every((s, i) => s.start === (i === 0 ? 0 : l0[i - 1]!.end) && s.summary !== null)).toBe(true)
      expect(l1).toHaveLength(1)
      expect(l0.filter((s) => s.parentId === l1[0]!.id)).toHaveLength(10)

      const human = (yield* kern(["segments", "list"], { dir, env }))
      expect(human.stdout).toMatch(/L1 +\d+ +0–\d[\d,]* /)
      expect(human.stdout).toContain(":1)")

      const shown = (yield* kern(["context", "show", "--json"], { dir, env }))
      expect(shown.status, shown.stderr).toBe(0)
      const context = JSON.parse(shown.stdout) as {
        request: string
        cut: number
        tokens: { total: number }
        injected: ReadonlyArray<{ level: number }>
        system: ReadonlyArray<{ kind: string; tokens: number }>
      }
      expect(context.request).toBe("next")
      expect(context.cut).toBeGreaterThan(0)
      expect(context.tokens.total).toBeLessThanOrEqual(20_000)
      expect(context.injected.length).toBeGreaterThan(0)
      expect(context.system.map((s) => s.kind)).toEqual(expect.arrayContaining(["preamble", "file", "tools"]))
      expect(context.system.every((s) => s.tokens > 0)).toBe(true)
      const text = (yield* kern(["context", "show"], { dir, env }))
      expect(text.stdout).toMatch(
        /next request \(before its message\): [\d,]+ of 20,000 tokens — system [\d,]+, tools [\d,]+, summaries [\d,]+, raw messages [\d,]+/
      )
      expect(text.stdout).toContain("conversation summary:")
      expect(text.stdout).toMatch(/raw window: messages [\d,]+–2,999; 0–[\d,]+ are summarized/)

      // Another session by id, and a bad one.
      const missing = (yield* kern(["segments", "list", "--session", "nope"], { dir, env }))
      expect(missing.status).toBe(1)
      expect(missing.stderr).toContain("nope")
    })), 120_000)

  it.live("a folder that is not an agent's, and --help that explains", () =>
    Effect.gen(function*() {
      const help = yield* kern(["segments", "--help"])
      expect(help.status).toBe(0)
      expect(help.stdout).toContain("rebuild")
      const contextHelp = yield* kern(["context", "show", "--help"])
      expect(contextHelp.stdout).toContain("system prompt by section")
      const notAgent = yield* kern(["context", "show", "/nonexistent-kern-folder"])
      expect(notAgent.status).toBe(2)
      expect(notAgent.stderr).toContain("nonexistent-kern-folder")
    }))

  it.live("show counts the tool definitions, builtin and MCP apart, and what offering MCP tools by name over mcpToolBudget saved", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeWith({})
      // 120 tools with real schemas (the official SDK's server): far over 10% of 100,000 tokens.
      const many = { command: process.execPath, args: [NodePath.resolve("test/support/manyToolsServer.mjs")] }
      const dir = initAgentWithModel(server.baseURL, { recall: false, embeddingModel: false, mcpServers: { many } })
      const shown = yield* kern(["context", "show"], { dir, env })
      expect(shown.status, shown.stderr).toBe(0)
      expect(shown.stdout).toMatch(
        /tool definitions: builtin [\d,]+, MCP 0; 120 MCP tools offered by name \(over mcpToolBudget\), loaded by tool_search: [\d,]+ tokens saved/
      )
      const json = JSON.parse((yield* kern(["context", "show", "--json"], { dir, env })).stdout) as {
        tokens: { tools: number }
        toolsCost: { builtin: number; mcp: number; lazyTools: number; saved: number }
      }
      expect(json.toolsCost).toMatchObject({ mcp: 0, lazyTools: 120 })
      expect(json.toolsCost.saved).toBeGreaterThan(10_000)
      expect(json.tokens.tools).toBe(json.toolsCost.builtin)

      // Under a budget they fit in, every definition is sent: counted as MCP, nothing saved.
      NodeFs.writeFileSync(NodePath.join(dir, ".kern", "config.json"), JSON.stringify({
        ...JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern", "config.json"), "utf8")),
        mcpToolBudget: 1
      }))
      const eager = JSON.parse((yield* kern(["context", "show", "--json"], { dir, env })).stdout) as typeof json
      expect(eager.toolsCost).toMatchObject({ lazyTools: 0, saved: 0 })
      expect(eager.toolsCost.mcp).toBe(json.toolsCost.saved)
      expect(eager.tokens.tools).toBe(eager.toolsCost.builtin + eager.toolsCost.mcp)
      expect((yield* kern(["context", "show"], { dir, env })).stdout).toMatch(/tool definitions: builtin [\d,]+, MCP [\d,]+\n/)
    })))
})
