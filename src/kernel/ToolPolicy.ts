import { Context, Data, Layer } from "effect"
import type { SafetyMode } from "../config/schema.js"
import { atOrBelow, type ToolSpec } from "./contracts.js"

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
  readonly blockedTools: ReadonlySet<string>
  /** When non-empty, only these tools may run. */
  readonly allowedTools: ReadonlySet<string>
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
  if (rules.blockedTools.has(spec.toolId)) return PolicyDecision.Deny({ reason: `${spec.toolId} is blocked by policy` })
  if (rules.allowedTools.size > 0 && !rules.allowedTools.has(spec.toolId)) {
    return PolicyDecision.Deny({ reason: `${spec.toolId} is not in the policy's allowed tools` })
  }
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

export class ToolPolicy extends Context.Tag("kern/kernel/ToolPolicy")<ToolPolicy, {
  readonly rules: PolicyRules
  readonly evaluate: (spec: ToolSpec, agentName: string, safetyMode: SafetyMode) => PolicyDecision
}>() {}

const make = (rules: PolicyRules) => ToolPolicy.of({ rules, evaluate: (spec, agent, mode) => evaluate(rules, spec, agent, mode) })

/** All tools up to DESTRUCTIVE (with approval), minus `blockedTools`; only `allowedTools` when given. */
export const normal = (options: { readonly blockedTools?: Iterable<string>; readonly allowedTools?: Iterable<string> } = {}) =>
  Layer.succeed(
    ToolPolicy,
    make({ mode: "normal", blockedTools: new Set(options.blockedTools), allowedTools: new Set(options.allowedTools) })
  )

export const safeMode = () => Layer.succeed(ToolPolicy, make({ mode: "safe", blockedTools: new Set(), allowedTools: new Set() }))

export const strictMode = () =>
  Layer.succeed(ToolPolicy, make({ mode: "strict", blockedTools: new Set(), allowedTools: new Set() }))

/** The policy a config's safetyMode asks for. */
export const fromSafetyMode = (mode: SafetyMode) =>
  mode === "SAFE" ? safeMode() : mode === "STRICT" ? strictMode() : normal()
