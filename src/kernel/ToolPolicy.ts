import { Context, Data, Effect, Layer, Option } from "effect"
import type { SafetyMode } from "../config/schema.js"
import type { ToolLists } from "../config/toolLists.js"
import type { RunOrigin } from "./ApprovalGate.js"
import { type AgentCapabilities, atOrBelow, type ToolSpec } from "./contracts.js"
import * as PrivilegedCalls from "./privilegedCalls.js"
import { matchesAnyToolPattern } from "./toolPatterns.js"

/** A policy's verdict. Deny outranks RequireApproval, which outranks Allow, whatever order the rules run in. */
export type PolicyDecision = Data.TaggedEnum<{
  Allow: {}
  Deny: { readonly reason: string }
  RequireApproval: { readonly reason: string }
}>
export const PolicyDecision = Data.taggedEnum<PolicyDecision>()

export type PolicyMode = "normal" | "safe" | "strict"

export interface PolicyRules {
  readonly mode: PolicyMode
  /** Tool ids or patterns (`*` matches any characters, as in `mcp.github.*`) that may not run. */
  readonly blockedTools: ReadonlySet<string>
  /** When non-empty, only the tools these ids or patterns match may run. */
  readonly allowedTools: ReadonlySet<string>
  /**
   * What an embedded agent declared it may use (seed 002): only the tools its `toolAllowlist` matches (all when empty),
   * none above its `safetyClassCeiling`. It narrows the config's rules, never widens them.
   */
  readonly capabilities?: AgentCapabilities | undefined
}

/** The declaration's verdict on a tool: a reason to deny it, or undefined when the declaration allows it. */
const declaredDenial = (capabilities: AgentCapabilities | undefined, spec: ToolSpec): string | undefined => {
  if (capabilities === undefined) return undefined
  const { agentName, safetyClassCeiling, toolAllowlist } = capabilities
  if (toolAllowlist.length > 0 && !matchesAnyToolPattern(new Set(toolAllowlist), spec.toolId)) {
    return `${spec.toolId} is not in the tool allow list agent "${agentName}" declares`
  }
  if (!atOrBelow(spec.safetyClass, safetyClassCeiling)) {
    return `${spec.toolId} is ${spec.safetyClass}, above the ${safetyClassCeiling} ceiling agent "${agentName}" declares`
  }
  return undefined
}

const restrictive = (mode: PolicyMode, safetyMode: SafetyMode): boolean => mode !== "normal" || safetyMode !== "NORMAL"

/**
 * Evaluates one call. SAFE and STRICT (from the policy or the run) allow READ_ONLY tools only, hence no network;
 * DESTRUCTIVE tools always need approval.
 */
export const evaluate = (
  rules: PolicyRules,
  spec: ToolSpec,
  agentName: string,
  safetyMode: SafetyMode
): PolicyDecision => {
  if (matchesAnyToolPattern(rules.blockedTools, spec.toolId)) {
    return PolicyDecision.Deny({ reason: `${spec.toolId} is blocked by policy` })
  }
  if (rules.allowedTools.size > 0 && !matchesAnyToolPattern(rules.allowedTools, spec.toolId)) {
    return PolicyDecision.Deny({ reason: `${spec.toolId} is not in the policy's allowed tools` })
  }
  const declared = declaredDenial(rules.capabilities, spec)
  if (declared !== undefined) return PolicyDecision.Deny({ reason: declared })
  if (spec.allowlistedAgents.length > 0 && !spec.allowlistedAgents.includes(agentName)) {
    return PolicyDecision.Deny({ reason: `${spec.toolId} is not allowlisted for agent "${agentName}"` })
  }
  if (restrictive(rules.mode, safetyMode) && !atOrBelow(spec.safetyClass, "READ_ONLY")) {
    const mode = rules.mode !== "normal" ? rules.mode.toUpperCase() : safetyMode
    return PolicyDecision.Deny({ reason: `${mode} mode allows read-only tools only; ${spec.toolId} is ${spec.safetyClass}` })
  }
  if (spec.safetyClass === "DESTRUCTIVE") {
    return PolicyDecision.RequireApproval({ reason: `${spec.toolId} is DESTRUCTIVE` })
  }
  return PolicyDecision.Allow()
}

/** One call as the policy judges it: the tool, its arguments and the run that makes it. */
export interface PolicyCall {
  readonly spec: ToolSpec
  readonly args: unknown
  readonly agentName: string
  readonly safetyMode: SafetyMode
  readonly origin?: RunOrigin | undefined
}

export class ToolPolicy extends Context.Tag("kern/kernel/ToolPolicy")<ToolPolicy, {
  readonly rules: PolicyRules
  /** The verdict on a tool, whatever its arguments. */
  readonly evaluate: (spec: ToolSpec, agentName: string, safetyMode: SafetyMode) => PolicyDecision
  /**
   * The verdict on one call: `evaluate`, and, when the policy asks a person for privileged calls (approvalMode ask),
   * RequireApproval for a call that grants what the model may not grant itself (privilegedCalls). An Effect only
   * when a path must be resolved to know.
   */
  readonly decide: (call: PolicyCall) => PolicyDecision | Effect.Effect<PolicyDecision>
}>() {}

const make = (rules: PolicyRules, privileged?: PrivilegedCalls.PrivilegedCheck) =>
  ToolPolicy.of({
    rules,
    evaluate: (spec, agent, mode) => evaluate(rules, spec, agent, mode),
    decide: (call) => {
      const verdict = evaluate(rules, call.spec, call.agentName, call.safetyMode)
      const check = verdict._tag === "Allow" && privileged !== undefined
        ? privileged({ toolId: call.spec.toolId, args: call.args, origin: call.origin })
        : undefined
      return check === undefined ? verdict : Effect.map(check, Option.match({
        onNone: () => verdict,
        onSome: (reason) => PolicyDecision.RequireApproval({ reason })
      }))
    }
  })

/** All tools up to DESTRUCTIVE (with approval), minus `blockedTools`; only `allowedTools` when given. */
export const normal = (options: { readonly blockedTools?: Iterable<string>; readonly allowedTools?: Iterable<string> } = {}) =>
  Layer.succeed(
    ToolPolicy,
    make({ mode: "normal", blockedTools: new Set(options.blockedTools), allowedTools: new Set(options.allowedTools) })
  )

export const safeMode = () => Layer.succeed(ToolPolicy, make({ mode: "safe", blockedTools: new Set(), allowedTools: new Set() }))

export const strictMode = () =>
  Layer.succeed(ToolPolicy, make({ mode: "strict", blockedTools: new Set(), allowedTools: new Set() }))

const rulesFor = (mode: SafetyMode, tools: Partial<ToolLists>, capabilities: AgentCapabilities | undefined): PolicyRules => ({
  mode: mode === "SAFE" ? "safe" : mode === "STRICT" ? "strict" : "normal",
  blockedTools: new Set(tools.block),
  allowedTools: new Set(tools.allow),
  capabilities
})

/**
 * The policy a config's safetyMode and `tools` allow and block lists ask for, narrowed by what an embedded agent
 * declares (`capabilities`), when it declares.
 */
export const fromSafetyMode = (mode: SafetyMode, tools: Partial<ToolLists> = {}, capabilities?: AgentCapabilities) =>
  Layer.succeed(ToolPolicy, make(rulesFor(mode, tools, capabilities)))

/**
 * fromSafetyMode, asking a person for privileged calls too (approvalMode ask): pairing, writing the identity files
 * of the agent folder at `root`, messaging anyone but the person the turn serves.
 */
export const askingForPrivileged = (
  mode: SafetyMode,
  root: string | undefined,
  tools: Partial<ToolLists> = {},
  capabilities?: AgentCapabilities
) => Layer.effect(ToolPolicy, Effect.map(PrivilegedCalls.make(root), (check) => make(rulesFor(mode, tools, capabilities), check)))
