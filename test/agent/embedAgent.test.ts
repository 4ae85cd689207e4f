import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { initAgentFolder } from "../support/agentFolder.js"
import { runCollected } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"

const root = NodePath.resolve(import.meta.dirname, "../..")
const example = NodePath.join(root, "scratchpad/embed-agent.ts")

/** The scratchpad example as a user runs it (tsx), without blocking the fake server in this process. */
const runExample = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  runCollected(process.execPath, ["--import", "tsx", example, ...args], { cwd: root, env })

describe("scratchpad/embed-agent.ts", () => {
  it("is at most 30 lines and imports kern only through the public entry", () => {
    const source = NodeFs.readFileSync(example, "utf8")
    expect(source.trimEnd().split("\n").length).toBeLessThanOrEqual(30)
    const kernImports = [...source.matchAll(/from "(\.\.?\/[^"]+)"/g)].map((match) => match[1])
    expect(kernImports).toEqual(["../src/index.js"])
  })

  it.live("runs a turn with a tool call against a model server given on the command line", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      // The folder points elsewhere: the example's argument is what reaches the server.
      const dir = initAgentFolder(["--model", "test-model", "--base-url", "http://127.0.0.1:9/v1"])
      NodeFs.writeFileSync(NodePath.join(dir, "plan.md"), "ship on friday\n")
      yield* server.reply(
        FakeReply.toolCalls([{ id: "c1", name: "read", args: { path: "plan.md" } }]),
        FakeReply.text("The plan: ship on friday.")
      )
      const result = yield* Effect.promise(() =>
        runExample([dir, server.baseURL, "what is the plan?"], { OPENROUTER_API_KEY: "sk-test" })
      )
      expect(result.stderr).toContain("→ read")
      expect(result.stdout).toContain("The plan: ship on friday.")
      expect(result.stdout).toMatch(/\(2 steps, \d+ tokens in\)/)
      expect(result.status).toBe(0)
      // The model's two steps; the agent's close also embeds the turn for recall (POST /embeddings).
      const all = yield* server.requests
      const requests = all.filter((request) => request.path !== "/embeddings")
      expect(requests).toHaveLength(2)
      expect(all.some((request) => request.path === "/embeddings")).toBe(true)
      expect(JSON.stringify(requests[1]?.body)).toContain("ship on friday")
      // The turn is in the agent's session, like any other.
      const sessions = NodeFs.readdirSync(NodePath.join(dir, ".kern/sessions"))
      expect(sessions).toHaveLength(1)
    })))
})
