import { Effect, Layer } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import * as KnownSecrets from "../config/KnownSecrets.js"
import type { ApprovalMode, ContractEnforcement, SafetyMode } from "../config/schema.js"
import * as ApprovalGate from "./ApprovalGate.js"
import * as ContractBaselineStore from "./ContractBaselineStore.js"
import * as DurableMemory from "./DurableMemory.js"
import * as EventLog from "./EventLog.js"
import * as ToolExecutor from "./ToolExecutor.js"
import * as ToolPolicy from "./ToolPolicy.js"
import * as ToolRegistry from "./ToolRegistry.js"

export interface KernelOptions {
  readonly safetyMode: SafetyMode
  readonly approvalMode: ApprovalMode
  readonly contractEnforcement: ContractEnforcement
  readonly surface?: string
}

/**
 * Everything a tool call needs, over an agent's kern.db: registry, policy, gate, audit log, baselines, executor.
 * The secrets the executor guards come from the caller (KnownSecrets.layer for an agent folder).
 */
export const layer = (options: KernelOptions) => {
  const services = Layer.mergeAll(
    ToolRegistry.layer,
    ToolPolicy.fromSafetyMode(options.safetyMode),
    ApprovalGate.fromApprovalMode(options.approvalMode),
    EventLog.layerSql,
    ContractBaselineStore.layerSql,
    DurableMemory.layerSql,
    ToolExecutor.settings(options.contractEnforcement, options.surface)
  )
  return ToolExecutor.layer.pipe(Layer.provideMerge(services))
}

/** The kernel as an agent folder's config describes it, guarding the folder's secrets. */
export const layerFromConfig = Layer.unwrapEffect(
  Effect.map(AgentConfig, ({ config }) =>
    layer({
      safetyMode: config.safetyMode,
      approvalMode: config.approvalMode,
      contractEnforcement: config.contractEnforcement
    }))
).pipe(Layer.provideMerge(KnownSecrets.layer))
