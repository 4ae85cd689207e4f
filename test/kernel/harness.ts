import { Effect, Layer } from "effect"
import * as ApprovalGate from "../../src/kernel/ApprovalGate.js"
import * as ContractBaselineStore from "../../src/kernel/ContractBaselineStore.js"
import * as EventLog from "../../src/kernel/EventLog.js"
import { makeRunContext, RunContext, type RunContextOptions } from "../../src/kernel/RunContext.js"
import * as ToolExecutor from "../../src/kernel/ToolExecutor.js"
import * as ToolPolicy from "../../src/kernel/ToolPolicy.js"
import * as ToolRegistry from "../../src/kernel/ToolRegistry.js"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import type { ContractEnforcement } from "../../src/config/schema.js"

export interface HarnessOptions {
  readonly policy?: Layer.Layer<ToolPolicy.ToolPolicy>
  readonly gate?: Layer.Layer<ApprovalGate.ApprovalGate>
  readonly eventLog?: Layer.Layer<EventLog.EventLog, unknown>
  readonly baselines?: Layer.Layer<ContractBaselineStore.ContractBaselineStore, unknown>
  readonly enforcement?: ContractEnforcement
  /** The secrets the executor guards (none unless given). */
  readonly secrets?: Readonly<Record<string, string>>
}

/** Registry, executor and their dependencies, all real; tests choose the policy, gate, log and enforcement. */
export const kernelLayer = (options: HarnessOptions = {}) => {
  const deps = Layer.mergeAll(
    ToolRegistry.layer,
    options.policy ?? ToolPolicy.normal(),
    options.gate ?? ApprovalGate.denyAll(),
    options.eventLog ?? EventLog.layerMemory,
    options.baselines ?? ContractBaselineStore.layerNone,
    ToolExecutor.settings(options.enforcement ?? "observe"),
    KnownSecrets.layerFrom(options.secrets ?? {})
  )
  return ToolExecutor.layer.pipe(Layer.provideMerge(deps))
}

/** Runs `effect` inside a fresh RunContext. */
export const inRun = <A, E, R>(effect: Effect.Effect<A, E, R>, options: RunContextOptions = {}) =>
  Effect.flatMap(makeRunContext(options), (ctx) => Effect.provideService(effect, RunContext, ctx))
