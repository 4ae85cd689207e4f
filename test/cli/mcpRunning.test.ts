import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { initAgentWithModel } from "../support/agentFolder.js"
import { recordedPid } from "../support/backgroundAgent.js"
import { runKern } from "../support/cli.js"
import { make as makeFakeServer } from "../support/fakeModelServer.js"
import { changingServer, taggedProcesses } from "../support/mcpServers.js"
import { makeTempDir } from "../support/tempDir.js"

// `kern mcp list` and `kern mcp tools` ask a running agent instead of starting servers of their own; with no agent
// running they start them as before. The test server writes a line per start, so starts are counted, not timed.

const env = { OPENROUTER_API_KEY: "sk-test" }

const kern = (args: ReadonlyArray<string>, cwd: string) => Effect.promise(() => runKern(args, { cwd, env }))

const starts = (file: string) => (NodeFs.existsSync(file) ? NodeFs.readFileSync(file, "utf8").trim().split("\n").length : 0)

describe("kern mcp beside a running agent", () => {
  it.live("list and tools come from the running agent (no server started for them); without an agent they start one", () =>
    Effect.scoped(Effect.gen(function*() {
      const model = yield* makeFakeServer
      const temp = makeTempDir("kern-mcp-running-")
      const startsFile = NodePath.join(temp, "starts.txt")
      const server = changingServer(NodePath.join(temp, "tools.json"), [
        { name: "lookup", description: "Looks a word up.", readOnly: true }
      ], { startsFile })
      const dir = initAgentWithModel(model.baseURL, { mcpServers: { changing: server.config } })
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const pid of taggedProcesses(dir)) process.kill(pid, "SIGKILL")
          if (NodeFs.existsSync(NodePath.join(dir, ".kern/agent.pid"))) {
            try {
              process.kill(recordedPid(dir), "SIGKILL")
            } catch {
              // already gone
            }
          }
        })
      )
      const started = yield* kern(["start"], dir)
      expect(started.status, started.stderr).toBe(0)

      const list = yield* kern(["mcp", "list", "--json"], dir)
      expect(list.status, list.stderr).toBe(0)
      // The agent's state: connected; the agent started the server once, and the command did not start another.
      expect(JSON.parse(list.stdout)).toMatchObject([{ name: "changing", state: "connected", tools: 1 }])
      expect(starts(startsFile)).toBe(1)

      const tools = yield* kern(["mcp", "tools", "changing", "--json"], dir)
      expect(tools.status, tools.stderr).toBe(0)
      expect(JSON.parse(tools.stdout)).toEqual([
        { server: "changing", tool: "lookup", toolId: "mcp.changing.lookup", safetyClass: "READ_ONLY", description: "Looks a word up." }
      ])
      const unknown = yield* kern(["mcp", "tools", "nope"], dir)
      expect(unknown.status).toBe(1)
      expect(unknown.stderr).toContain("no such server")
      expect(starts(startsFile)).toBe(1)

      expect((yield* kern(["stop"], dir)).status).toBe(0)
      const alone = yield* kern(["mcp", "list", "--json"], dir)
      expect(alone.status, alone.stderr).toBe(0)
      expect(JSON.parse(alone.stdout)).toMatchObject([{ name: "changing", state: "connected", tools: 1 }])
      expect(starts(startsFile)).toBe(2)
      const aloneTools = yield* kern(["mcp", "tools", "changing", "--json"], dir)
      expect(aloneTools.status, aloneTools.stderr).toBe(0)
      expect(JSON.parse(aloneTools.stdout)).toHaveLength(1)
      expect(starts(startsFile)).toBe(3)
    })), 180_000)
})
