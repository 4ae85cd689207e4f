import type { FileSystem, Path } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { Effect, Layer, type Schema } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import type { ToolScope } from "../config/schema.js"
import { scopeCovers, scopeTag } from "../kernel/toolScope.js"
import { RunContext } from "../kernel/RunContext.js"
import type { ToolFailure } from "../kernel/ToolFailure.js"
import type { EventLog } from "../kernel/EventLog.js"
import { ToolRegistry } from "../kernel/ToolRegistry.js"
import { unknownToolNames } from "./toolListNames.js"
import { askKernelTimeoutMs, askUserQuestion, AskUserQuestionArgs, askUserQuestionTool } from "./askUserQuestion.js"
import { BashArgs, bashHandler, bashDefaultTimeoutMs, bashKernelTimeoutMs, bashTool } from "./bash.js"
import { contextBudgetStats, ContextBudgetStatsArgs, contextBudgetStatsTool } from "./contextBudgetStats.js"
import { contextForTask, ContextForTaskArgs, contextForTaskTool } from "./contextForTask.js"
import { edit, EditArgs, editTool } from "./edit.js"
import { glob, GlobArgs, globTool } from "./glob.js"
import { grep, GrepArgs, grepTool } from "./grep.js"
import { PairingStore } from "../users/PairingStore.js"
import { message, MessageArgs, messageTool } from "./message.js"
import type { MediaStore } from "../media/MediaStore.js"
import { schedule, ScheduleArgs, scheduleTool } from "./schedule.js"
import type { ScheduleStore } from "./schedules/ScheduleStore.js"
import { kern, KernArgs, kernPair, KernPairArgs, kernPairTool, kernTool } from "./kern.js"
import { read, ReadArgs, readTool } from "./read.js"
import { recall, RecallArgs, recallTool } from "./recall.js"
import type { Recall } from "../recall/Recall.js"
import type { Channels } from "./Channels.js"
import * as RuntimeInfo from "./RuntimeInfo.js"
import { Jobs, unavailable as jobsUnavailable } from "./Jobs.js"
import { retrieveToolOutput, RetrieveToolOutputArgs, retrieveToolOutputTool } from "./retrieveToolOutput.js"
import { summarizeFileStructure, SummarizeFileStructureArgs, summarizeFileStructureTool } from "./summarizeFileStructure.js"
import type { ToolMetadata } from "./toolMetadata.js"
import type { ToolServices } from "./ToolServices.js"
import { ToolSession } from "./ToolSession.js"
import { webfetch, WebfetchArgs, webfetchTool } from "./webfetch.js"
import { webSearch, WebSearchArgs, webSearchTool } from "./webSearch/webSearch.js"
import { Workspace } from "./Workspace.js"
import { write, WriteArgs, writeTool } from "./write.js"

/** What the built-in handlers need besides per-call data; captured when they are registered. */
export type BuiltinRequirements =
  | ToolServices
  | FileSystem.FileSystem
  | Path.Path
  // the kern tool: config, runtime figures, the kernel event log, usage totals in kern.db
  | AgentConfig
  | RuntimeInfo.RuntimeInfo
  | EventLog
  | SqlClient.SqlClient
  | PairingStore
  // the recall tool: the agent's index of past conversations
  | Recall
  // the message tool: the running chat channels, and the files it sends
  | Channels
  | MediaStore
  // bash with background: the running agent's jobs (refused elsewhere)
  | Jobs
  // the schedule tool: the schedules in kern.db
  | ScheduleStore

type AnyHandler = (args: unknown) => Effect.Effect<unknown, ToolFailure, BuiltinRequirements | ToolSession>

/** One built-in tool: its contract, argument Schema and handler (services resolved at registration). */
interface BuiltinTool<A, I, R> {
  readonly metadata: ToolMetadata
  readonly parameters: Schema.Schema<A, I, never>
  readonly handler: (args: A) => Effect.Effect<unknown, ToolFailure, R>
  readonly timeoutFor?: (args: A) => number | undefined
  /** How long a call runs when it names no timeout (listings show it); the kernel's limit then comes from timeoutFor. */
  readonly defaultTimeoutMs?: number
}

const tool = <A, I, R>(definition: BuiltinTool<A, I, R>) => definition

/** Whether a tool is offered under a config's `toolScope` (read ⊂ write ⊂ full). */
export const inScope = (metadata: ToolMetadata, scope: ToolScope): boolean => scopeCovers(scope, metadata.scope)

/**
 * Each call runs in its run's session and its run's workspace, both from the RunContext of the call, not from the
 * registration: read-before-write and duplicate outputs are tracked per session, and a non-operator's conversation
 * gets the workspace of `shared/` alone (Workspace.forRun), so every file tool, bash's folder included, is confined
 * by this one door.
 */
const inRun = <A, R>(handler: (args: A) => Effect.Effect<unknown, ToolFailure, R>) => (args: A) =>
  Effect.gen(function*() {
    const ctx = yield* RunContext
    const workspace = yield* (yield* Workspace).forRun(ctx)
    return yield* handler(args).pipe(
      Effect.provideService(ToolSession, { sessionId: ctx.sessionId === "" ? ctx.runId : ctx.sessionId }),
      Effect.provideService(Workspace, workspace)
    )
  })

export const builtinTools = [
  tool({ metadata: readTool, parameters: ReadArgs, handler: read }),
  tool({ metadata: writeTool, parameters: WriteArgs, handler: write }),
  tool({ metadata: editTool, parameters: EditArgs, handler: edit }),
  tool({ metadata: globTool, parameters: GlobArgs, handler: glob }),
  tool({ metadata: grepTool, parameters: GrepArgs, handler: grep }),
  tool({
    metadata: bashTool,
    parameters: BashArgs,
    handler: bashHandler,
    timeoutFor: bashKernelTimeoutMs,
    defaultTimeoutMs: bashDefaultTimeoutMs
  }),
  tool({ metadata: webfetchTool, parameters: WebfetchArgs, handler: webfetch }),
  tool({ metadata: webSearchTool, parameters: WebSearchArgs, handler: webSearch }),
  tool({ metadata: retrieveToolOutputTool, parameters: RetrieveToolOutputArgs, handler: retrieveToolOutput }),
  tool({ metadata: contextBudgetStatsTool, parameters: ContextBudgetStatsArgs, handler: contextBudgetStats }),
  tool({ metadata: summarizeFileStructureTool, parameters: SummarizeFileStructureArgs, handler: summarizeFileStructure }),
  tool({ metadata: contextForTaskTool, parameters: ContextForTaskArgs, handler: contextForTask }),
  tool({ metadata: kernTool, parameters: KernArgs, handler: kern }),
  tool({ metadata: recallTool, parameters: RecallArgs, handler: recall }),
  tool({ metadata: kernPairTool, parameters: KernPairArgs, handler: kernPair }),
  tool({ metadata: messageTool, parameters: MessageArgs, handler: message }),
  tool({ metadata: scheduleTool, parameters: ScheduleArgs, handler: schedule }),
  tool({ metadata: askUserQuestionTool, parameters: AskUserQuestionArgs, handler: askUserQuestion, timeoutFor: askKernelTimeoutMs })
] as const

/** Registers the built-in tools the config's `toolScope` allows (`recall` only while the config's `recall` is on). */
export const registerBuiltins = (scope: ToolScope, options: { readonly recall?: boolean } = {}) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    for (const definition of builtinTools) {
      if (!inScope(definition.metadata, scope)) continue
      if (definition.metadata.toolId === recallTool.toolId && options.recall === false) continue
      const { metadata } = definition
      yield* registry.register(
        {
          toolId: metadata.toolId,
          name: metadata.name,
          description: metadata.description,
          safetyClass: metadata.safetyClass,
          idempotent: metadata.idempotent,
          timeoutMs: metadata.timeoutMs,
          sideEffectLevel: metadata.safetyClass === "READ_ONLY" || metadata.safetyClass === "NETWORK"
            ? "none"
            : "local_write",
          riskTags: [scopeTag(metadata.scope)]
        },
        {
          parameters: definition.parameters as Schema.Schema<unknown, unknown>,
          handler: inRun(definition.handler as AnyHandler),
          ...(definition.timeoutFor === undefined
            ? {}
            : { timeoutFor: definition.timeoutFor as (args: unknown) => number | undefined }),
          ...("defaultTimeoutMs" in definition ? { defaultTimeoutMs: definition.defaultTimeoutMs } : {})
        }
      )
    }
  })

/**
 * The built-in tools of the loaded agent, registered in its registry, with the RuntimeInfo the `kern` tool reports
 * from and the Jobs bash starts background commands with: the running agent passes live ones
 * (`RuntimeInfo.layerWith`, src/runtime/jobsLive.ts); elsewhere background commands are refused.
 */
export const layerWith = <E, R, EJ = never, RJ = never>(
  runtimeInfo: Layer.Layer<RuntimeInfo.RuntimeInfo, E, R>,
  jobs: Layer.Layer<Jobs, EJ, RJ> = jobsUnavailable as Layer.Layer<Jobs, EJ, RJ>
) =>
  Layer.effectDiscard(Effect.flatMap(AgentConfig, ({ config }) =>
    Effect.zipRight(registerBuiltins(config.toolScope, { recall: config.recall }), warnUnknownToolNames(config)))).pipe(
    Layer.provide(Layer.merge(runtimeInfo, jobs))
  )

/** A warning for each `tools.allow`/`tools.block` entry that names no tool (toolListNames.ts). */
const warnUnknownToolNames = (config: AgentConfig["Type"]["config"]) =>
  Effect.flatMap(ToolRegistry, (registry) =>
    Effect.flatMap(registry.listIds, (registered) =>
      Effect.forEach(
        unknownToolNames(config.tools, config.mcpServers, [...builtinTools.map((tool) => tool.metadata.toolId), ...registered]),
        (warning) => Effect.logWarning(`config: ${warning}`),
        { discard: true }
      )))

/** The built-in tools of the loaded agent; `kern` reports uptime from registration and no live figures. */
export const layer = layerWith(RuntimeInfo.layer)
