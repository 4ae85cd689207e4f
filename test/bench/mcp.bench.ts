import * as NodeContext from "@effect/platform-node/NodeContext"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Context, Effect, Layer, Schema } from "effect"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import { kernelAgentLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { makeRunContext } from "../../src/kernel/RunContext.js"
import { ToolExecutor } from "../../src/kernel/ToolExecutor.js"
import { ToolRegistry } from "../../src/kernel/ToolRegistry.js"
import { McpServers } from "../../src/mcp/McpServers.js"
import { everythingBin } from "../support/mcpServers.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { type Bench, median } from "./bench.js"

const batch = 50
const rounds = 15
/**
 * Rounds run before the measured ones, all four legs alternating as they do. Kern's path through the kernel is several
 * times the SDK client's code, and V8 optimizes a function only after many calls: over its first few hundred calls kern
 * pays for its code's tier-up while the SDK's small path is already optimized, which is not the cost of a call in an
 * agent that calls tools for hours. Both sides get the same warm-up; what these rounds measure (what this bench
 * measured before it had them) is reported as `freshRatio`, not hidden.
 */
const warmupRounds = 15

/**
 * Per-call milliseconds of server-everything's `echo` over stdio: through kern's kernel (policy, budget, audit in
 * kern.db, redaction, the MCP client service) against the SDK's own client calling its own server process, rounds
 * alternating. A third leg, reported as `kernServerMs`, makes the same call on the SDK client kern holds, to the
 * server process kern started (its environment and folder): the same transport and server without the kernel, so
 * the kernel's own cost is the samples' median minus it, and a difference between it and the baseline is the
 * server's start-up environment, not kern's work. A fourth, `kernelNoopMs`, calls a tool of the same agent's kernel
 * whose handler only waits for the next macrotask (as an MCP call waits for its answer): what the kernel costs a call
 * that suspends, in the agent's configuration (its policy, baselines, event log, services), without MCP.
 */
const measure = Effect.gen(function*() {
  const client = new Client({ name: "bench", version: "1" })
  yield* Effect.acquireRelease(
    Effect.promise(() => client.connect(new StdioClientTransport({ command: everythingBin, args: ["stdio"] }))),
    () => Effect.promise(() => client.close())
  )
  const executor = yield* ToolExecutor
  const ctx = yield* makeRunContext({ agentName: "agent", userSid: "operator", budget: { maxToolCalls: Number.MAX_SAFE_INTEGER, maxLatencyMs: Number.MAX_SAFE_INTEGER } })
  const viaKernel = Effect.gen(function*() {
    const result = yield* executor.executeIn(ctx, "mcp.everything.echo", { message: "hi" })
    if (!result.success) return yield* Effect.dieMessage(`echo failed: ${result.errorMessage}`)
  })
  const direct = Effect.promise(() => client.callTool({ name: "echo", arguments: { message: "hi" } }))
  // The same call on the SDK client kern holds, to kern's server process: transport and server without the kernel.
  const kernClient = yield* (yield* McpServers).client("everything").pipe(Effect.orDie)
  const kernServer = Effect.promise(() => kernClient.callTool({ name: "echo", arguments: { message: "hi" } }))
  // A tool that waits as an MCP call does, with nothing of MCP: the kernel's own part of a call that suspends.
  yield* (yield* ToolRegistry).register({ toolId: "bench.wait", name: "Wait", safetyClass: "READ_ONLY" }, {
    parameters: Schema.Struct({ message: Schema.String }),
    handler: (args: { readonly message: string }) =>
      Effect.async<string>((resume) => {
        const immediate = setImmediate(() => resume(Effect.succeed(args.message)))
        return Effect.sync(() => clearImmediate(immediate))
      })
  }).pipe(
    // Registered as MCP tools are, with no captured services (registerTools.ts): no copy of the agent's per call.
    Effect.mapInputContext((_: Context.Context<never>) => Context.empty()),
    Effect.orDie
  )
  const kernelNoop = Effect.gen(function*() {
    const result = yield* executor.executeIn(ctx, "bench.wait", { message: "hi" })
    if (!result.success) return yield* Effect.dieMessage(`wait failed: ${result.errorMessage}`)
  })
  const time = (effect: Effect.Effect<unknown>, cpuInto?: Array<number>) =>
    Effect.gen(function*() {
      const start = performance.now()
      const cpuStart = process.cpuUsage()
      for (let i = 0; i < batch; i++) yield* effect
      const used = process.cpuUsage(cpuStart)
      cpuInto?.push((used.user + used.system) / 1000 / batch)
      return (performance.now() - start) / batch
    })
  yield* time(viaKernel)
  yield* time(direct)
  yield* time(kernServer)
  yield* time(kernelNoop)
  const fresh: Array<number> = []
  const freshBaseline: Array<number> = []
  for (let i = 0; i < warmupRounds; i++) {
    fresh.push(yield* time(viaKernel))
    freshBaseline.push(yield* time(direct))
    yield* time(kernServer)
    yield* time(kernelNoop)
  }
  const samples: Array<number> = []
  const baseline: Array<number> = []
  const viaKernServer: Array<number> = []
  const viaKernelNoop: Array<number> = []
  const kernelNoopCpu: Array<number> = []
  const cpu: Array<number> = []
  const baselineCpu: Array<number> = []
  for (let i = 0; i < rounds; i++) {
    samples.push(yield* time(viaKernel, cpu))
    baseline.push(yield* time(direct, baselineCpu))
    viaKernServer.push(yield* time(kernServer))
    viaKernelNoop.push(yield* time(kernelNoop, kernelNoopCpu))
  }
  // This process's CPU per call (the servers' own is theirs): on a shared machine the wall time includes waiting for a core.
  const freshRatio = median(fresh) / median(freshBaseline)
  return { samples, baseline, extra: { freshRatio, kernServerMs: median(viaKernServer), kernelNoopMs: median(viaKernelNoop), kernelNoopCpuMs: median(kernelNoopCpu), cpuMs: median(cpu), baselineCpuMs: median(baselineCpu) } }
})

const run = () => {
  const dir = NodePath.join(makeTempDir("kern-bench-mcp-"), "agent")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({
      provider: "openai",
      model: "bench",
      mcpServers: { everything: { command: everythingBin, args: ["stdio"] } }
    })
  })
  const layer = kernelAgentLayer(dir).pipe(
    Layer.provide(Layer.succeed(ProcessEnv, { PATH: process.env["PATH"] ?? "/usr/bin:/bin" })),
    Layer.provide(NodeContext.layer)
  )
  return Effect.runPromise(Effect.scoped(measure).pipe(Effect.provide(layer)))
}

export const benches: ReadonlyArray<Bench> = [
  {
    name: "mcp.call.overhead",
    unit: "ms/call",
    targets: [{ of: "ratio", atMost: 1.5 }],
    run
  }
]
