import { Prompt } from "@effect/ai"
import { FileSystem } from "@effect/platform"
import { Context, Effect, Ref } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import { promptCachingApplies, withCacheBreakpoints } from "../context/caching.js"
import { ContextWindow } from "../context/ContextWindow.js"
import type { SessionHistory } from "../context/SessionHistory.js"
import { buildSystemPromptFrom, type PromptSkill, type PromptTool } from "../context/systemPrompt.js"
import { makeFileCache } from "../memory/fileCache.js"
import { wireOfConfig } from "../media/imageLimits.js"
import { makePromptMedia } from "../media/promptMedia.js"
import { modelSees } from "../model/visionModels.js"
import { NotesSummary } from "../memory/NotesSummary.js"
import { type AutoRecall, withRecallBlock } from "../recall/autoRecall.js"
import { Recall } from "../recall/Recall.js"
import type { RunContextData } from "../kernel/RunContext.js"
import { ContextStats } from "../tools/ContextStats.js"
import type { TurnEventBody } from "./TurnEvent.js"
import type { TurnToolkit } from "./turnToolkit.js"

/** What a step's prompt is made for. */
export interface StepPromptInput {
  readonly sessionId: string
  readonly history: SessionHistory
  readonly kit: TurnToolkit
  readonly modelId: string
  /** The turn's message: what auto-recall searches for. */
  readonly query: string
  readonly emit: (event: TurnEventBody) => Effect.Effect<void>
  /** Set to where the prepared window starts, for the tools that read the session. */
  readonly windowStart: Ref.Ref<number>
  /** Auto-recall runs at the first step; the later ones carry what it found. */
  readonly firstStep: boolean
  readonly recalled: AutoRecall | undefined
  /** The turn's audience and tool scope: whose conversation the prompt and auto-recall may draw on (Audience.ts). */
  readonly run: Pick<RunContextData, "audience" | "toolScope">
  /** The skills the `<skills>` section lists: the turn's, when it offers read_skill (offeredTools.ts). */
  readonly skills: ReadonlyArray<PromptSkill>
}

/**
 * A step's prompt: the system prompt over the memory files (read again only when they change), the context window's
 * history, auto-recall's block and the cache marks the provider takes.
 */
export const makeStepPrompt = Effect.gen(function*() {
  const loaded = yield* AgentConfig
  const { config } = loaded
  const fs = yield* FileSystem.FileSystem
  const summaries = yield* NotesSummary
  const recall = yield* Recall
  const context = yield* ContextWindow
  const contextStats = yield* ContextStats
  const files = yield* makeFileCache
  const media = yield* makePromptMedia
  const wire = wireOfConfig(config)
  // The system prompt's services, made once per agent: each step provides them in one go.
  const promptServices = Context.make(AgentConfig, loaded).pipe(
    Context.add(FileSystem.FileSystem, fs),
    Context.add(NotesSummary, summaries)
  )
  const systemPrompt = (tools: ReadonlyArray<PromptTool>, run: StepPromptInput["run"], skills: ReadonlyArray<PromptSkill>) =>
    buildSystemPromptFrom(files, { tools, run, skills }).pipe(Effect.provide(promptServices))

  /**
   * Auto-recall, once a turn, when messages were trimmed from the context: what is still raw (the cut on) is never
   * recalled again.
   */
  const autoRecall = (input: StepPromptInput, cut: number, messages: number) =>
    Effect.gen(function*() {
      const recalled = yield* recall.autoRecall(
        { enabled: config.autoRecall, trimmed: cut > 0, maxDistance: config.autoRecallMaxDistance, maxTokens: config.autoRecallTokens },
        input.query,
        [{ sessionId: input.sessionId, messageStart: cut, messageEnd: Math.max(cut, messages - 1) }],
        input.run
      )
      if (recalled !== undefined) {
        yield* input.emit({ type: "recall", query: recalled.query, hits: recalled.hits.length, tokens: recalled.tokens })
      }
      return recalled
    })

  return (input: StepPromptInput) =>
    Effect.gen(function*() {
      const prepared = yield* context.prepare({
        sessionId: input.sessionId,
        history: input.history,
        system: yield* systemPrompt(input.kit.promptTools, input.run, input.skills),
        toolsTokens: input.kit.tokens,
        modelId: input.modelId,
        progress: (text) => input.emit({ type: "context", text })
      })
      yield* Ref.set(input.windowStart, prepared.breakdown.cut)
      // A statistic the turn does not need: a database that cannot take it is logged, and the turn goes on.
      yield* contextStats.setActiveContextTokens(input.sessionId, prepared.breakdown.tokens.total).pipe(
        Effect.catchTag("ToolFailure", (failure) => Effect.logWarning(failure.message))
      )
      const recalled = input.firstStep ? yield* autoRecall(input, prepared.breakdown.cut, prepared.breakdown.messages) : input.recalled
      // Images and PDFs of the window as this step's model takes them (parts, or notes saying why not).
      const withMedia = yield* media.render(prepared.prompt.content, {
        sees: modelSees(config.vision, input.modelId),
        wire,
        provider: config.provider
      })
      // The block rides in a copy of the prompt: never in the session, never in the cached prefix.
      const messages = recalled === undefined ? withMedia : withRecallBlock(withMedia, recalled.block)
      // Anthropic caches only what is marked: the system prompt, a mid-history message and the last user message.
      const prompt = promptCachingApplies(config.provider, input.modelId)
        ? Prompt.fromMessages(withCacheBreakpoints(messages))
        : messages === prepared.prompt.content
        ? prepared.prompt
        : Prompt.fromMessages(messages)
      return { estimate: prepared.estimate, prompt, recalled }
    })
})
