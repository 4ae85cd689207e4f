import { Effect, Layer, Option } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import * as KnownSecrets from "../config/KnownSecrets.js"
import type { ApprovalMode, ContractEnforcement, SafetyMode } from "../config/schema.js"
import type { ToolLists } from "../config/toolLists.js"
import type { AgentCapabilities } from "./contracts.js"
import * as ApprovalGate from "./ApprovalGate.js"
import { journalFolder } from "./auditJournal.js"
import * as ContractBaselineStore from "./ContractBaselineStore.js"
import * as DurableMemory from "./DurableMemory.js"
import * as EventLog from "./EventLog.js"
import * as ToolExecutor from "./ToolExecutor.js"
import * as ToolPolicy from "./ToolPolicy.js"
import * as ToolRegistry from "./ToolRegistry.js"

export interface KernelOptions {
  readonly safetyMode: SafetyMode
  /** The config's `tools` allow and block lists. */
  readonly tools?: Partial<ToolLists>
  /** What an embedded agent declares it may use: narrows the policy (ToolPolicy.PolicyRules.capabilities). */
  readonly capabilities?: AgentCapabilities | undefined
  readonly approvalMode: ApprovalMode
  readonly contractEnforcement: ContractEnforcement
  readonly surface?: string
  /** The agent folder, whose identity files are privileged under approvalMode ask. */
  readonly root?: string
  /**
   * Where the audit journals go when kern.db is not a file (PostgreSQL): the agent's `.kern/audit`. On SQLite they
   * live beside kern.db whatever this says.
   */
  readonly auditFolder?: string | undefined
}

/** What layerWithGate builds from: the options, and whether privileged calls need a person (approvalMode ask). */
export interface GatedKernelOptions extends Omit<KernelOptions, "approvalMode"> {
  readonly askForPrivileged: boolean
}

/**
 * Everything a tool call needs, over an agent's kern.db: registry, policy, gate, audit log, baselines, executor.
 * The secrets the executor guards come from the caller (KnownSecrets.layer for an agent folder).
 */
export const layer = (options: KernelOptions) =>
  layerWithGate({ ...options, askForPrivileged: options.approvalMode === "ask" }, ApprovalGate.fromApprovalMode(options.approvalMode))

/**
 * As `layer`, with the approval gate (and what it brings) built over the kernel's own services: the running agent
 * passes one that asks people (Approvals), which records its decisions in the kernel's EventLog.
 */
export const layerWithGate = <A, E, R>(
  options: GatedKernelOptions,
  gate: Layer.Layer<A | ApprovalGate.ApprovalGate, E, R>
) => {
  const services = Layer.mergeAll(
    ToolRegistry.layer,
    options.askForPrivileged
      ? ToolPolicy.askingForPrivileged(options.safetyMode, options.root, options.tools, options.capabilities)
      : ToolPolicy.fromSafetyMode(options.safetyMode, options.tools, options.capabilities),
    EventLog.layerSqlAt(Option.fromNullable(options.auditFolder)),
    ContractBaselineStore.layerSql,
    DurableMemory.layerSql,
    ToolExecutor.settings(options.contractEnforcement, options.surface)
  )
  return ToolExecutor.layer.pipe(Layer.provideMerge(gate), Layer.provideMerge(services))
}

const fromConfig = <A, E, R>(
  gate: (config: AgentConfig["Type"]["config"]) => Layer.Layer<A | ApprovalGate.ApprovalGate, E, R>,
  capabilities?: AgentCapabilities
) =>
  Layer.unwrapEffect(
    Effect.map(AgentConfig, ({ config, paths }) =>
      layerWithGate({
        safetyMode: config.safetyMode,
        tools: config.tools,
        contractEnforcement: config.contractEnforcement,
        askForPrivileged: config.approvalMode === "ask",
        root: paths.dir,
        auditFolder: journalFolder(paths.dbFile),
        capabilities
      }, gate(config)))
  ).pipe(Layer.provideMerge(KnownSecrets.layer))

/** The kernel as an agent folder's config describes it, guarding the folder's secrets. */
export const layerFromConfig = fromConfig((config) => ApprovalGate.fromApprovalMode(config.approvalMode))

/**
 * layerFromConfig with the gate a caller builds from the config (the running agent's asks people), narrowed by what
 * an embedded agent declares (`capabilities`).
 */
export const layerFromConfigWith = fromConfig
