import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Layer } from "effect"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { kernelAgentLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { makeRunContext } from "../../src/kernel/RunContext.js"
import { ToolExecutor } from "../../src/kernel/ToolExecutor.js"
import type { RunToolScope } from "../../src/kernel/toolScope.js"
import { callTagVariable, folderTagKey } from "../../src/tools/processTag.js"
import { freePort } from "./freePort.js"
import { eventually } from "./waitFor.js"

// The reference MCP servers, installed as dev dependencies: real servers over the real transports.

const bin = (name: string) => NodePath.resolve("node_modules/.bin", name)
export const everythingBin = bin("mcp-server-everything")
export const filesystemBin = bin("mcp-server-filesystem")

/**
 * server-everything serving Streamable HTTP (and SSE at /sse) on a free port, for the test's scope: its URL once it
 * says it listens.
 */
export const everythingOverHttp = Effect.gen(function*() {
  const port = yield* freePort
  const child = yield* Effect.acquireRelease(
    Effect.sync(() =>
      NodeChildProcess.spawn(process.execPath, [NodeFs.realpathSync(everythingBin), "streamableHttp"], {
        env: { PATH: process.env["PATH"] ?? "", PORT: String(port) },
        stdio: ["ignore", "ignore", "pipe"]
      })
    ),
    (child) => Effect.sync(() => child.kill("SIGKILL"))
  )
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  const listening = yield* eventually(() => stderr.includes(`port ${port}`))
  if (!listening) return yield* Effect.dieMessage(`server-everything did not start: ${stderr}`)
  return { url: `http://127.0.0.1:${port}/mcp`, child }
})

/** The live processes whose environment carries a tag of the agent folder `root` (its real path). */
export const taggedProcesses = (root: string): ReadonlyArray<number> => {
  const needle = Buffer.from(`${callTagVariable}=${folderTagKey(NodeFs.realpathSync(root))}-`)
  const found: Array<number> = []
  for (const entry of NodeFs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const environ = NodeFs.readFileSync(`/proc/${entry}/environ`)
      const stat = NodeFs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
      if (environ.includes(needle) && state !== "Z") found.push(Number(entry))
    } catch {
      // gone meanwhile, or another user's
    }
  }
  return found
}

/** A tool of the changing test server (mcpChangingServer.mjs): its description and annotations come from a file. */
export interface ChangingTool {
  readonly name: string
  readonly description: string
  readonly readOnly?: boolean
  /** A second, optional argument by this name: a change of the tool's input schema. */
  readonly extraArg?: string
}

/**
 * The changing test server: its tools are written to `file` (changed by calling `write` again, which the running
 * server picks up and announces with notifications/tools/list_changed); the config entry that runs it.
 */
export const changingServer = (
  file: string,
  tools: ReadonlyArray<ChangingTool>,
  options: { readonly spawnChild?: boolean; readonly startsFile?: string } = {}
) => {
  const write = (next: ReadonlyArray<ChangingTool>) => NodeFs.writeFileSync(file, JSON.stringify({ tools: next }))
  write(tools)
  return {
    write,
    config: {
      command: process.execPath,
      args: [NodePath.resolve("test/support/mcpChangingServer.mjs")],
      env: {
        MCP_TOOLS_FILE: file,
        ...(options.spawnChild === true ? { MCP_SPAWN_CHILD: "1" } : {}),
        ...(options.startsFile === undefined ? {} : { MCP_STARTS_FILE: options.startsFile })
      }
    }
  }
}

/** Runs a kernel tool as the operator (or a paired user of `toolScope`), as a model's call would be run. */
export const execTool = (toolId: string, args: unknown, toolScope?: RunToolScope) =>
  Effect.gen(function*() {
    const ctx = yield* makeRunContext({
      agentName: "agent",
      sessionId: "test",
      userSid: "operator",
      intent: "test",
      ...(toolScope === undefined ? {} : { toolScope })
    })
    return yield* (yield* ToolExecutor).executeIn(ctx, toolId, args)
  })

/** The kernel of the agent folder `dir` with its MCP servers connected, as kernel commands build it. */
export const mcpAgentLayer = (dir: string) =>
  kernelAgentLayer(dir).pipe(
    Layer.provide(Layer.succeed(ProcessEnv, { PATH: process.env["PATH"] ?? "/usr/bin:/bin" })),
    Layer.provide(NodeContext.layer)
  )
