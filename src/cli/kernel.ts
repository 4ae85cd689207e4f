import { Console, Effect, Either, Option } from "effect"
import pkg from "../../package.json" with { type: "json" }
import { AgentConfig } from "../config/AgentConfig.js"
import { parseJsonText } from "../config/json.js"
import { type SafetyClass, safetyRank, type ToolSpec } from "../kernel/contracts.js"
import { EventLog } from "../kernel/EventLog.js"
import { contractFingerprint } from "../kernel/fingerprint.js"
import { decisionNamespaces } from "../kernel/namespaces.js"
import { dataText } from "../kernel/resultText.js"
import { makeRunContext } from "../kernel/RunContext.js"
import { ToolExecutor } from "../kernel/ToolExecutor.js"
import { ToolPolicy } from "../kernel/ToolPolicy.js"
import { defaultCallTimeoutMs, ToolRegistry } from "../kernel/ToolRegistry.js"
import { kernelAgentLayer } from "./agentLayer.js"
import { CommandFailed, UsageError } from "./errors.js"
import { table } from "./table.js"

/** A tool as `kernel tools` shows it; `timeoutMs` is how long a call runs when it names no timeout of its own. */
const specJson = (spec: ToolSpec, timeoutMs: number) => ({
  toolId: spec.toolId,
  name: spec.name,
  description: spec.description,
  safetyClass: spec.safetyClass,
  idempotent: spec.idempotent,
  timeoutMs,
  maxRetries: spec.maxRetries,
  allowlistedAgents: spec.allowlistedAgents,
  args: spec.argsSchema.map((arg) => ({ name: arg.name, type: arg.type, required: arg.required, description: arg.description })),
  fingerprint: contractFingerprint(spec)
})

export const info = (args: KernelInfoArgs) =>
  Effect.gen(function*() {
    const { config, paths } = yield* AgentConfig
    const registry = yield* ToolRegistry
    const policy = yield* ToolPolicy
    const specs = yield* registry.listAll
    const bySafety: Record<string, number> = { READ_ONLY: 0, LOCAL_WRITE: 0, NETWORK: 0, DESTRUCTIVE: 0 }
    for (const spec of specs) bySafety[spec.safetyClass] = (bySafety[spec.safetyClass] ?? 0) + 1
    const events = yield* Effect.flatMap(EventLog, (log) => log.count)
    const data = {
      version: pkg.version,
      agent: config.name,
      database: paths.dbFile,
      tools: specs.length,
      toolsBySafety: bySafety,
      policy: policy.rules.mode,
      safetyMode: config.safetyMode,
      approvalMode: config.approvalMode,
      contractEnforcement: config.contractEnforcement,
      toolScope: config.toolScope,
      namespaces: Object.keys(decisionNamespaces).length,
      events
    }
    if (args.json) return yield* Console.log(JSON.stringify(data))
    yield* Console.log([
      `kern kernel ${data.version} — agent "${data.agent}"`,
      `tools:                ${data.tools} (${Object.entries(bySafety).map(([k, v]) => `${v} ${k}`).join(", ")})`,
      `policy:               ${data.policy} (safetyMode ${data.safetyMode}, approvalMode ${data.approvalMode})`,
      `contract enforcement: ${data.contractEnforcement}`,
      `tool scope:           ${data.toolScope}`,
      `decision namespaces:  ${data.namespaces}`,
      `events recorded:      ${data.events}`,
      `database:             ${data.database}`
    ].join("\n"))
  }).pipe(Effect.provide(kernelAgentLayer(args.dir)))

export const namespaces = (args: { readonly json: boolean }) =>
  args.json
    ? Console.log(JSON.stringify(Object.entries(decisionNamespaces).map(([key, meaning]) => ({ key, meaning }))))
    : Console.log(table(["key", "meaning"], Object.entries(decisionNamespaces)))

const safetyChoices: Record<string, SafetyClass> = {
  read_only: "READ_ONLY",
  local_write: "LOCAL_WRITE",
  network: "NETWORK",
  destructive: "DESTRUCTIVE"
}

export const tools = (args: KernelToolsArgs) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const allowed = Option.isSome(args.agent)
      ? new Set((yield* registry.filterForAgent(args.agent.value)).map((spec) => spec.toolId))
      : undefined
    let tools = (yield* registry.listTools).filter((tool) => allowed === undefined || allowed.has(tool.spec.toolId))
    if (Option.isSome(args.safety)) {
      const ceiling = safetyChoices[args.safety.value]!
      tools = tools.filter(({ spec }) => safetyRank[spec.safetyClass] <= safetyRank[ceiling])
    }
    if (args.json) return yield* Console.log(JSON.stringify(tools.map((tool) => specJson(tool.spec, defaultCallTimeoutMs(tool)))))
    if (tools.length === 0) return yield* Console.log("no tools match")
    yield* Console.log(table(
      ["tool", "safety", "idempotent", "timeout", "description"],
      tools.map((tool) => [
        tool.spec.toolId,
        tool.spec.safetyClass,
        tool.spec.idempotent ? "yes" : "no",
        `${defaultCallTimeoutMs(tool)} ms`,
        tool.spec.description.split("\n")[0]!.slice(0, 70)
      ])
    ))
  }).pipe(Effect.provide(kernelAgentLayer(args.dir)))

export const exec = (args: KernelExecArgs) => runTool(args).pipe(Effect.provide(kernelAgentLayer(args.dir)))

/** Runs one tool through the executor as the operator and prints its result: `kernel exec`, `mcp call`. */
export const runTool = (args: Omit<KernelExecArgs, "dir">) =>
  Effect.gen(function*() {
    const parsed = parseJsonText(args.args)
    if (Either.isLeft(parsed)) return yield* new UsageError({ message: `--args is not valid JSON: ${parsed.left}` })
    const { config } = yield* AgentConfig
    const executor = yield* ToolExecutor
    const ctx = yield* makeRunContext({
      agentName: config.name,
      sessionId: "cli",
      userSid: "operator",
      intent: `kern ${args.toolId.startsWith("mcp.") ? "mcp call" : "kernel exec"} ${args.toolId}`,
      safetyMode: Option.getOrElse(args.safetyMode, () => config.safetyMode),
      // The config's per-turn caps are the kernel's own keys.
      budget: config.budget
    })
    const result = yield* executor.executeIn(ctx, args.toolId, parsed.right)
    if (args.json) {
      yield* Console.log(JSON.stringify(result))
    } else if (result.success) {
      yield* Console.log(dataText(result.data))
    }
    if (!result.success) {
      return yield* new CommandFailed({ message: `${args.toolId}: ${result.errorCode}: ${result.errorMessage}` })
    }
  })

export interface KernelInfoArgs {
  readonly dir: string
  readonly json: boolean
}

export interface KernelToolsArgs {
  readonly dir: string
  readonly json: boolean
  readonly safety: Option.Option<string>
  readonly agent: Option.Option<string>
}

export interface KernelExecArgs {
  readonly dir: string
  readonly json: boolean
  readonly toolId: string
  readonly args: string
  readonly safetyMode: Option.Option<"NORMAL" | "SAFE" | "STRICT">
}
