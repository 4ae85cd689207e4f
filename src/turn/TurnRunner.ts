import { LanguageModel, Prompt, type Toolkit } from "@effect/ai"
import { FileSystem } from "@effect/platform"
import { Clock, DateTime, Effect, Option, Ref } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import { KnownSecrets } from "../config/KnownSecrets.js"
import { toolkitFor } from "../kernel/aiTools.js"
import { makeFileCache } from "../memory/fileCache.js"
import { EventLog, recordRunEvent } from "../kernel/EventLog.js"
import type { DecisionKey } from "../kernel/namespaces.js"
import { toolResultText } from "../kernel/resultText.js"
import { makeRunContext, type RunContextData } from "../kernel/RunContext.js"
import { redactSecretsInText } from "../kernel/secretGuard.js"
import { ToolExecutor } from "../kernel/ToolExecutor.js"
import { allowsTool, type RunToolScope } from "../kernel/toolScope.js"
import { PairingStore } from "../users/PairingStore.js"
import { type RegisteredTool, ToolRegistry } from "../kernel/ToolRegistry.js"
import { NotesSummary } from "../memory/NotesSummary.js"
import { priceTable } from "../model/pricing.js"
import { HeartbeatModel } from "../model/HeartbeatModel.js"
import { AssistantMessage, Envelope, type SessionMessage, ToolResultMessage, UserMessage } from "../session/messages.js"
import { redactMessage } from "../session/redactMessage.js"
import type { SessionWriter } from "../session/SessionStore.js"
import { ContextStats } from "../tools/ContextStats.js"
import { OutputCompactor } from "../tools/OutputCompactor.js"
import { promptCachingApplies, withCacheBreakpoints } from "../context/caching.js"
import { ContextWindow } from "../context/ContextWindow.js"
import { toolDefinitionsTokens } from "../context/toolTokens.js"
import { withRecallBlock } from "../recall/autoRecall.js"
import type { AutoRecall } from "../recall/autoRecall.js"
import { Recall } from "../recall/Recall.js"
import { agentZone, isNoReply, localIso } from "../session/envelope.js"
import { modelStep } from "./modelStep.js"
import { redactingEmit } from "./redactEvents.js"
import { heartbeatInterface, MessageQueue, operatorUserId, type QueuedMessage } from "./MessageQueue.js"
import { pairedInterfaces } from "../tools/Channels.js"
import type { SessionHistory } from "../context/SessionHistory.js"
import { buildSystemPromptFrom, type PromptTool, promptToolsOf } from "../context/systemPrompt.js"
import { loggedTurn, logModelStep } from "./turnLog.js"
import { addUsage, noUsage, type TurnEvent, type TurnUsage } from "./TurnEvent.js"
import { budgetFailure, encodeFailure, modelStepFailure, stepLimit, type TurnFailure } from "./TurnFailure.js"

/** The session a turn writes to: its file and the messages so far. */
export interface ActiveSession {
  readonly id: string
  readonly writer: SessionWriter
  readonly history: SessionHistory
}

export interface TurnInput {
  readonly message: QueuedMessage
  readonly session: ActiveSession
  readonly emit: (event: TurnEvent) => Effect.Effect<void>
  /** Called once a message of the turn (its own, or one injected) is in the session: a durable one leaves the inbox. */
  readonly recorded?: ((message: QueuedMessage) => Effect.Effect<void>) | undefined
}

export interface TurnOutcome {
  readonly reply: string
  readonly delivered: boolean
  readonly steps: number
  readonly usage: TurnUsage
  /** Time spent waiting on the model (all steps), in milliseconds: the rest of the turn is kern's own. */
  readonly modelMs: number
  /** Why the turn ended without the model's final answer; absent when it finished. */
  readonly failure?: TurnFailure
}

// The turn's records are built from values already of their types, and their classes have no refinements
// (test/session/unvalidatedRecords.test.ts holds that): validating each again on construction is work for nothing.
const checked = true

/** `turn` is the turn the message belongs to: the one it starts, or the running one it is injected into. */
const envelopeOf = (message: QueuedMessage, at: string, turn: string) =>
  new Envelope({ interface: message.interface, channel: message.channel, userId: message.userId, time: at, turn }, checked)

const makeToolkit = (tools: ReadonlyArray<RegisteredTool>, count: (text: string) => number) => {
  const { toolIdOf, toolkit } = toolkitFor(tools)
  const withHandler: Toolkit.WithHandler<any> = {
    tools: toolkit.tools,
    // Tool calls are resolved by the kernel's executor, never by @effect/ai.
    handle: () => Effect.die("kern resolves tool calls through its executor")
  }
  const tokens = toolDefinitionsTokens(Object.values(toolkit.tools), count)
  const promptTools = promptToolsOf(tools)
  return { toolIdOf, withHandler, tokens, promptTools }
}

/** One agent turn: stream from the model, run its tool calls through the kernel, repeat up to maxSteps. */
export class TurnRunner extends Effect.Service<TurnRunner>()("kern/turn/TurnRunner", {
  effect: Effect.gen(function*() {
    const loaded = yield* AgentConfig
    const { config } = loaded
    const model = yield* LanguageModel.LanguageModel
    const heartbeat = yield* HeartbeatModel
    const registry = yield* ToolRegistry
    const executor = yield* ToolExecutor
    const eventLog = yield* EventLog
    const compactor = yield* OutputCompactor
    const queue = yield* MessageQueue
    const pairings = yield* PairingStore
    const fs = yield* FileSystem.FileSystem
    const { secrets } = yield* KnownSecrets
    // The envelope's time is local, with its offset, in the agent's zone: made once, it is costly.
    const zone = agentZone(config.timezone)
    const prices = priceTable(config.prices)
    const summaries = yield* NotesSummary
    const recall = yield* Recall
    const context = yield* ContextWindow
    const contextStats = yield* ContextStats
    // Memory files are read again only when they change.
    const files = yield* makeFileCache
    const systemPrompt = (tools: ReadonlyArray<PromptTool>) =>
      buildSystemPromptFrom(files, { tools }).pipe(
        Effect.provideService(AgentConfig, loaded),
        Effect.provideService(FileSystem.FileSystem, fs),
        Effect.provideService(NotesSummary, summaries)
      )

    const audit = (ctx: RunContextData, decisionKey: DecisionKey, status: string, detail: unknown) =>
      recordRunEvent(eventLog, ctx, decisionKey, status, detail)

    // Building a toolkit renders every tool's JSON Schema: do it again only when the offered tools change (one
    // toolkit per scope users have, at most three).
    const toolkitCache = yield* Ref.make(new Map<string, ReturnType<typeof makeToolkit>>())
    const count = context.count
    const toolkitOf = (tools: ReadonlyArray<RegisteredTool>) =>
      Ref.modify(toolkitCache, (cached) => {
        const key = tools.map((tool) => tool.fingerprint).join(",")
        const hit = cached.get(key)
        if (hit !== undefined) return [hit, cached]
        const value = makeToolkit(tools, count)
        const next = new Map(cached.size >= 8 ? [] : cached)
        return [value, next.set(key, value)]
      })

    /**
     * The most a message's user may use. A chat channel's user (Telegram, Slack) gets their paired scope, or nothing
     * when they are not paired (or the lookup fails); the operator (terminal, web, CLI, HTTP API, an embedding app's
     * own interfaces) and the heartbeat get whatever is registered (the config's toolScope).
     */
    const scopeOf = (message: QueuedMessage): Effect.Effect<RunToolScope | undefined> =>
      message.userId === operatorUserId || !pairedInterfaces.has(message.interface)
        ? Effect.succeed(undefined)
        : pairings.scopeFor(message.interface, message.userId, config.toolScope).pipe(
          Effect.map(Option.getOrElse((): RunToolScope => "none")),
          Effect.catchAll((error) => Effect.as(Effect.logWarning(`kern: ${error.message}; the turn runs without tools`), "none" as const))
        )

    const run = (input: TurnInput) =>
      Effect.gen(function*() {
        const { message, session } = input
        // No known secret leaves the turn, whoever wrote it: not in an event, the session or the history sent to the model.
        const emit = redactingEmit(input.emit, secrets)
        const recorded = input.recorded ?? (() => Effect.void)
        const toolScope = yield* scopeOf(message)
        const windowStart = yield* Ref.make(0)
        const ctx = yield* makeRunContext({
          windowStart,
          sessionId: session.id,
          userSid: message.userId,
          agentName: config.name,
          intent: message.text.slice(0, 200),
          safetyMode: config.safetyMode,
          // The config's per-turn caps are the kernel's own keys.
          budget: config.budget,
          origin: { interface: message.interface, channel: message.channel, userId: message.userId },
          ...(toolScope === undefined ? {} : { toolScope })
        })
        // The line's place in the file goes with the message: the context's cut is stored as one, so a restart
        // reads the session from there.
        const append = (raw: SessionMessage) =>
          Effect.gen(function*() {
            const entry = redactMessage(raw, secrets)
            const before = yield* session.writer.stats
            yield* session.writer.append(entry)
            yield* session.history.append(entry, { byteOffset: before.bytes, linesBefore: before.messages })
          })
        const now = Effect.map(DateTime.now, DateTime.formatIso)
        const userMessage = (queued: QueuedMessage) =>
          Effect.map(now, (at) =>
            new UserMessage({
              text: queued.text,
              envelope: envelopeOf(queued, localIso(queued.receivedAtMs, zone), message.turnId),
              ...(queued.inboxId === undefined ? {} : { inboxId: queued.inboxId }),
              at
            }, checked))

        yield* audit(ctx, "kernel.run.started", "ok", { interface: message.interface, channel: message.channel })
        yield* append(yield* userMessage(message))
        yield* recorded(message)

        // A paired user is offered only what their scope allows; the executor refuses the rest whatever is asked.
        const registered = yield* registry.listTools
        const tools = toolScope === undefined ? registered : registered.filter((tool) => allowsTool(toolScope, tool.spec))
        const { promptTools, toolIdOf, tokens: toolsTokens, withHandler } = yield* toolkitOf(tools)
        let recalled: AutoRecall | undefined

        // A heartbeat may run on a cheaper model (`heartbeatModel`).
        const turnModel = message.interface === heartbeatInterface
          ? heartbeat
          : { model, modelId: config.model ?? "" }
        const cachingOn = promptCachingApplies(config.provider, turnModel.modelId)
        let usage = noUsage
        let modelMs = 0
        let reply = ""
        let steps = 0
        let failure: TurnFailure | undefined
        for (let step = 1; step <= config.maxSteps; step++) {
          steps = step
          if (step > 1) {
            for (const injected of yield* queue.takeInjectable) {
              yield* append(yield* userMessage(injected))
              yield* recorded(injected)
              yield* emit({ type: "injected", text: injected.text, message: injected })
            }
          }
          yield* emit({ type: "step", step })
          const budgetUsage = yield* ctx.budget.usage
          const exhausted = budgetFailure(ctx.budget.limits, budgetUsage)
          if (exhausted !== undefined) {
            failure = exhausted
            yield* audit(ctx, "kernel.budget.exceeded", "stopped", budgetUsage)
            break
          }
          const prepared = yield* context.prepare({
            sessionId: session.id,
            history: session.history,
            system: yield* systemPrompt(promptTools),
            toolsTokens,
            modelId: turnModel.modelId,
            progress: (text) => emit({ type: "context", text })
          })
          yield* Ref.set(windowStart, prepared.breakdown.cut)
          yield* contextStats.setActiveContextTokens(session.id, prepared.breakdown.tokens.total)
          if (step === 1) {
            // Auto-recall, once a turn, when messages were trimmed from the context: what is still raw (the cut on)
            // is never recalled again.
            const { cut, messages } = prepared.breakdown
            recalled = yield* recall.autoRecall(
              { enabled: config.autoRecall, trimmed: cut > 0, maxDistance: config.autoRecallMaxDistance, maxTokens: config.autoRecallTokens },
              message.text,
              [{ sessionId: session.id, messageStart: cut, messageEnd: Math.max(cut, messages - 1) }]
            )
            if (recalled !== undefined) {
              yield* emit({ type: "recall", query: recalled.query, hits: recalled.hits, tokens: recalled.tokens })
            }
          }
          // The block rides in a copy of the prompt: never in the session, never in the cached prefix.
          const messages = recalled === undefined ? prepared.prompt.content : withRecallBlock(prepared.prompt.content, recalled.block)
          // Anthropic caches only what is marked: the system prompt, a mid-history message and the last user message.
          const prompt = cachingOn
            ? Prompt.fromMessages(withCacheBreakpoints(messages))
            : recalled === undefined
            ? prepared.prompt
            : Prompt.fromMessages(messages)
          // The last step may only answer: no tools are offered.
          const offered = step < config.maxSteps && tools.length > 0 ? withHandler : undefined
          const modelStart = yield* Clock.currentTimeNanos
          const result = yield* Effect.either(
            modelStep({ ...turnModel, prices, prompt, toolkit: offered, toolIdOf, emit })
          )
          const stepMs = Number((yield* Clock.currentTimeNanos) - modelStart) / 1e6
          modelMs += stepMs
          if (result._tag === "Left") {
            failure = modelStepFailure(result.left)
            break
          }
          const { calls, text } = result.right
          yield* logModelStep(step, result.right.usage, stepMs, calls.length)
          usage = addUsage(usage, result.right.usage)
          yield* context.calibrate(turnModel.modelId, prepared.estimate, result.right.usage.inputTokens)
          yield* ctx.budget.addPromptTokens(result.right.usage.inputTokens)
          yield* ctx.budget.addCostUsdCents(result.right.usage.costUsdCents)
          yield* append(new AssistantMessage({ text, toolCalls: calls, usage: result.right.usage, at: yield* now }, checked))
          reply = redactSecretsInText(text, secrets)
          if (calls.length === 0) break
          yield* Effect.forEach(calls, (call) =>
            Effect.gen(function*() {
              const started = yield* Clock.currentTimeMillis
              const toolResult = yield* executor.executeIn(ctx, call.name, call.params)
              const compacted = yield* compactor.compact({
                sessionId: session.id,
                toolId: call.name,
                text: toolResultText(toolResult),
                isError: !toolResult.success
              }).pipe(Effect.catchAll((error) => Effect.succeed({ text: `${toolResultText(toolResult)}\n[not stored: ${error.message}]` })))
              yield* append(new ToolResultMessage({
                toolCallId: call.id,
                toolName: call.name,
                isError: !toolResult.success,
                result: compacted.text,
                at: yield* now
              }, checked))
              const durationMs = (yield* Clock.currentTimeMillis) - started
              yield* emit({ type: "tool-result", id: call.id, name: call.name, isError: !toolResult.success, text: compacted.text, durationMs })
            }), { concurrency: "unbounded", discard: true })
          if (step === config.maxSteps) failure = stepLimit(config.maxSteps)
        }
        if (usage !== noUsage) yield* emit({ type: "usage", ...usage })
        const encoded = failure === undefined ? undefined : encodeFailure(failure)
        if (failure !== undefined && encoded !== undefined) yield* emit({ type: "error", message: failure.message, failure: encoded })
        const delivered = reply.trim() !== "" && !isNoReply(reply)
        yield* audit(ctx, "kernel.run.finished", failure === undefined ? "ok" : "error", {
          kind: "turn",
          usage,
          steps,
          error: failure?.message ?? null,
          failure: encoded ?? null
        })
        // Segments and summaries of what the turn added, in the background: the reply is not held up for them.
        yield* context.afterTurn(session.id, session.history)
        yield* emit({ type: "done", reply, delivered, steps })
        return { reply, delivered, steps, usage, modelMs, ...(failure === undefined ? {} : { failure }) } satisfies TurnOutcome
      }).pipe(loggedTurn(input.message, input.session.id), Effect.withSpan("kern.agent.turn"))

    return { run } as const
  })
}) {}
