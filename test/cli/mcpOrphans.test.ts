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
import { eventually } from "../support/waitFor.js"
import { processRunning } from "../../src/storage/processState.js"

// An agent's stdio MCP server, and the child that server started, do not outlive a kill -9 of the agent: the next
// start reaps them (the tag bash's processes carry), and a stop leaves nothing of the agent's running.

const env = { OPENROUTER_API_KEY: "sk-test" }

const kern = (args: ReadonlyArray<string>, cwd: string) => Effect.promise(() => runKern(args, { cwd, env }))


describe("MCP servers' processes", () => {
  it.live("kill -9 of the agent with a stdio server (and its own child) running: the next start reaps them all", () =>
    Effect.scoped(Effect.gen(function*() {
      const model = yield* makeFakeServer
      const server = changingServer(NodePath.join(makeTempDir("kern-mcp-orphans-"), "tools.json"), [
        { name: "echo", description: "Echoes." }
      ], { spawnChild: true })
      const dir = initAgentWithModel(model.baseURL, { mcpServers: { changing: server.config } })
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const pid of taggedProcesses(dir)) process.kill(pid, "SIGKILL")
          const agent = NodeFs.existsSync(NodePath.join(dir, ".kern/agent.pid")) ? recordedPid(dir) : undefined
          if (agent !== undefined && processRunning(agent)) process.kill(agent, "SIGKILL")
        })
      )
      const started = yield* kern(["start"], dir)
      expect(started.status, started.stderr).toBe(0)
      // The server and the child it spawned, both tagged with the agent folder.
      expect(yield* eventually(() => taggedProcesses(dir).length >= 2)).toBe(true)
      const left = taggedProcesses(dir)

      const agent = recordedPid(dir)
      process.kill(agent, "SIGKILL")
      expect(yield* eventually(() => !processRunning(agent))).toBe(true)
      // The server may leave by itself once its stdin closes with its agent; the child it spawned does not, and nothing
      // stops it when its agent dies by SIGKILL: that is the next start's work.
      expect(left.filter(processRunning).length).toBeGreaterThan(0)

      const restarted = yield* kern(["start"], dir)
      expect(restarted.status, restarted.stderr).toBe(0)
      expect(yield* eventually(() => left.every((pid) => !processRunning(pid)))).toBe(true)
      const log = NodeFs.readFileSync(NodePath.join(dir, ".kern/logs/kern.log"), "utf8")
      expect(log).toMatch(/reaped \d+ process/)
      // The new agent runs a server of its own; stopping it leaves no process of the folder.
      expect(yield* eventually(() => taggedProcesses(dir).length >= 2)).toBe(true)
      expect((yield* kern(["stop"], dir)).status).toBe(0)
      expect(yield* eventually(() => taggedProcesses(dir).length === 0)).toBe(true)
    })), 180_000)
})
