import { LanguageModel } from "@effect/ai"
import { Clock, type Context, DateTime, Effect, Either, Option, Ref } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import { KnownSecrets } from "../config/KnownSecrets.js"
import { EventLog, journalRunEvent, recordRunEvent } from "../kernel/EventLog.js"
import type { DecisionKey } from "../kernel/namespaces.js"
import { toolResultText } from "../kernel/resultText.js"
import { makeRunContext, type RunContextData } from "../kernel/RunContext.js"
import { redactSecretsInText } from "../kernel/secretGuard.js"
import { ToolExecutor } from "../kernel/ToolExecutor.js"
import type { ToolSpec } from "../kernel/contracts.js"
import type { RunToolScope } from "../kernel/toolScope.js"
import type { Audience } from "../kernel/Audience.js"
import { effectiveScope, type Pairing, PairingStore } from "../users/PairingStore.js"
import { ToolRegistry } from "../kernel/ToolRegistry.js"
import { ToolPolicy } from "../kernel/ToolPolicy.js"
import { priceTable } from "../model/pricing.js"
import { HeartbeatModel } from "../model/HeartbeatModel.js"
import { SpendAttribution, type SpendAttributionData, turnAttribution } from "../model/SpendAttribution.js"
import { AssistantMessage, Envelope, type SessionMessage, ToolResultMessage, TurnFailedMessage, UserMessage } from "../session/messages.js"
import { redactMessage } from "../session/redactMessage.js"
import type { SessionError, SessionWriter } from "../session/SessionStore.js"
import { OutputCompactor } from "../tools/OutputCompactor.js"
import { Questions } from "../tools/Questions.js"
import { ContextWindow } from "../context/ContextWindow.js"
import { agentZone, makeZonedIso } from "../session/envelope.js"
import { modelStep, type StepCall, type StepResult } from "./modelStep.js"
import { type TurnStop, TurnStops } from "./TurnStops.js"
import { redactingEmit } from "./redactEvents.js"
import { noReplyEmit } from "./replyFilter.js"
import { heartbeatInterface, MessageQueue, operatorUserId, type QueuedMessage } from "./MessageQueue.js"
import { pairedInterfaces } from "../tools/Channels.js"
import type { SessionHistory } from "../context/SessionHistory.js"
import { spannedTurnEnd, turnSpanAttributes } from "./turnSpan.js"
import { loggedTurn, logModelStep } from "./turnLog.js"
import { makeStepPrompt } from "./turnPrompt.js"
import { makeToolkitCache } from "./turnToolkit.js"
import { definedTools, offeredTools, promptSkills, type TurnOffer } from "./offeredTools.js"
import { isMcpToolId } from "../kernel/mcpToolId.js"
import { makeSkills } from "../skills/Skills.js"
import type { PromptSkill } from "../context/systemPrompt.js"
import { SubAgentStore } from "../tools/subagents/SubAgentStore.js"
import { subagentInterface } from "../kernel/Audience.js"
import { subagentTerms, type SubagentTerms } from "./subagentTerms.js"
import { incomingOf, type TurnEvent, type TurnEventBody, turnIdsOf } from "./TurnEvent.js"
import { budgetFailure, encodeFailure, modelStepFailure, type TurnFailure } from "./TurnFailure.js"
import { answered, beginTally, nextStep, outcomeOf, stopped, type TurnOutcome, type TurnTally, withRecalled } from "./turnTally.js"
import { annotateKeptSpan, keptSpan } from "../kernel/keptSpan.js"

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

// The turn's records are built from values already of their types, and their classes have no refinements
// (test/session/unvalidatedRecords.test.ts holds that): validating each again on construction is work for nothing.
const checked = true

/** `turn` is the turn the message belongs to: the one it starts, or the running one it is injected into. */
const envelopeOf = (message: QueuedMessage, at: string, turn: string) =>
  new Envelope({ interface: message.interface, channel: message.channel, userId: message.userId, time: at, turn }, checked)

/** What every step of one turn works with, made once as the turn starts. */
interface Turn {
  readonly message: QueuedMessage
  readonly session: ActiveSession
  /** The caller's emit: each event named with the turn's ids, every known secret redacted, NO_REPLY held back. */
  readonly emit: (event: TurnEventBody) => Effect.Effect<void>
  readonly recorded: (message: QueuedMessage) => Effect.Effect<void>
  readonly ctx: RunContextData
  /** Where the context window starts, for the tools that read the session (the cut of the last prepared prompt). */
  readonly windowStart: Ref.Ref<number>
  /** The skills the system prompt lists: read when the turn opens, so a changed skill counts from the next message. */
  readonly skills: ReadonlyArray<PromptSkill>
  /** The tools the turn offers, and whether its MCP tools go by name until loaded (offeredTools.ts). */
  readonly offer: TurnOffer
  /** The MCP tools loaded so far in the turn (by tool_search, or by a call of the tool): the run context's. */
  readonly loaded: Ref.Ref<ReadonlySet<string>>
  readonly model: Context.Tag.Service<HeartbeatModel>
  /** The turn's stop (TurnStops): looked at before each step, and ending the model's stream or the tool calls it meets. */
  readonly stop: TurnStop
}

/** What a call's result says when the turn was stopped before it ran, or while it ran (its processes killed). */
const notRunText = "not run: the turn was stopped"
const cutShortText = "stopped: the turn was stopped while this call ran (it and the processes it started were ended)"

/** One agent turn: stream from the model, run its tool calls through the kernel, repeat up to maxSteps. */
export class TurnRunner extends Effect.Service<TurnRunner>()("kern/turn/TurnRunner", {
  effect: Effect.gen(function*() {
    const { config } = yield* AgentConfig
    const model = yield* LanguageModel.LanguageModel
    const heartbeat = yield* HeartbeatModel
    const registry = yield* ToolRegistry
    const policy = yield* ToolPolicy
    const executor = yield* ToolExecutor
    const eventLog = yield* EventLog
    const compactor = yield* OutputCompactor
    const queue = yield* MessageQueue
    const pairings = yield* PairingStore
    const { secrets } = yield* KnownSecrets
    // The envelope's time is local, with its offset, in the agent's zone: made once, it is costly (and so is its
    // offset, looked up once a quarter hour).
    const localTime = makeZonedIso(agentZone(config.timezone))
    const prices = priceTable(config.prices)
    const context = yield* ContextWindow
    const stepPrompt = yield* makeStepPrompt
    const skillsReader = yield* makeSkills
    const stops = yield* TurnStops
    const questions = yield* Questions
    const subagents = yield* SubAgentStore

    const audit = (ctx: RunContextData, decisionKey: DecisionKey, status: string, detail: unknown) =>
      recordRunEvent(eventLog, ctx, decisionKey, status, detail)

    const toolkitOf = yield* makeToolkitCache(yield* context.counter)

    /**
     * The approved pairing of a chat channel's user (Telegram, Slack), read once per turn: none when they are not
     * paired or it cannot be read (kern.db busy). Undefined for the operator (terminal, web, CLI, HTTP API, an
     * embedding app's own interfaces) and the heartbeat: no pairing limits them.
     */
    const pairingOf = (message: QueuedMessage): Effect.Effect<Option.Option<Pairing> | undefined> =>
      message.userId === operatorUserId || !pairedInterfaces.has(message.interface)
        ? Effect.succeed(undefined)
        : pairings.approvedUser(message.interface, message.userId).pipe(
          Effect.catchAll((error) =>
            Effect.as(
              Effect.logWarning(`kern: ${error.message}; the turn runs without tools and its files stay in shared/`),
              Option.none<Pairing>()
            )
          )
        )

    /**
     * The most a message's user may use: a chat channel's user their paired scope, or nothing without a pairing; the
     * operator and the heartbeat whatever is registered (the config's toolScope).
     */
    const scopeOf = (pairing: Option.Option<Pairing> | undefined): RunToolScope | undefined =>
      pairing === undefined ? undefined : Option.match(pairing, {
        onNone: (): RunToolScope => "none",
        onSome: (found) => effectiveScope(found, config.toolScope)
      })

    /**
     * Whose conversation the turn serves: what its prompt, recall and tools may see (Audience.ts). A paired user's
     * name and memory reach come from their pairing; without one the reach is shared/.
     */
    const audienceOf = (message: QueuedMessage, pairing: Option.Option<Pairing> | undefined): Audience => ({
      conversationId: message.conversation,
      interface: message.interface,
      channel: message.channel,
      userId: message.userId,
      ...Option.match(pairing ?? Option.none(), {
        onNone: () => ({ memory: "shared" as const }),
        onSome: (found) => ({ memory: found.memory, ...(found.displayName === "" ? {} : { name: found.displayName }) })
      })
    })

    /**
     * A sub-agent's turn runs under its stored terms (subagentTerms.ts), never under what its message's interface and
     * user would give it; when its row cannot be read, under none.
     */
    const termsOf = (message: QueuedMessage): Effect.Effect<SubagentTerms | undefined> =>
      message.interface !== subagentInterface
        ? Effect.succeed(undefined)
        : subagents.get(Number(message.channel)).pipe(
          Effect.catchAll((error) => Effect.as(Effect.logWarning(`kern: ${error.message}; the sub-agent's turn runs with nothing`), Option.none())),
          Effect.map((found) => subagentTerms(message, found, config.budget))
        )

    const now = Effect.map(DateTime.now, DateTime.formatIso)

    // The line's place in the file goes with the message: the context's cut is stored as one, so a restart reads the
    // session from there. No known secret reaches the session or the history sent to the model, whoever wrote it.
    const append = (session: ActiveSession, raw: SessionMessage) =>
      Effect.gen(function*() {
        const entry = redactMessage(raw, secrets)
        const before = yield* session.writer.stats
        yield* session.writer.append(entry)
        yield* session.history.append(entry, { byteOffset: before.bytes, linesBefore: before.messages })
      })

    /** A message of the turn (its own, or one injected) into the session; then a durable one leaves the inbox. */
    const recordUser = (turn: Turn, queued: QueuedMessage) =>
      Effect.gen(function*() {
        yield* append(turn.session, new UserMessage({
          text: queued.text,
          ...(queued.attachments === undefined || queued.attachments.length === 0 ? {} : { attachments: queued.attachments }),
          envelope: envelopeOf(queued, localTime(queued.receivedAtMs), turn.message.turnId),
          ...(queued.inboxId === undefined ? {} : { inboxId: queued.inboxId }),
          at: yield* now
        }, checked))
        yield* turn.recorded(queued)
      })

    /** The turn's run context, the tools its user may be offered and its model (a heartbeat's may be cheaper). */
    const openTurn = (input: TurnInput, stop: TurnStop) =>
      Effect.gen(function*() {
        const { message, session } = input
        const delegated = yield* termsOf(message)
        const pairing = delegated === undefined ? yield* pairingOf(message) : undefined
        const toolScope = delegated === undefined ? scopeOf(pairing) : delegated.toolScope
        const audience = delegated === undefined ? audienceOf(message, pairing) : delegated.audience
        const windowStart = yield* Ref.make(0)
        const loaded = yield* Ref.make<ReadonlySet<string>>(new Set())
        const made = yield* makeRunContext({
          windowStart,
          loadedTools: loaded,
          sessionId: session.id,
          userSid: message.userId,
          agentName: config.name,
          intent: message.text.slice(0, 200),
          safetyMode: config.safetyMode,
          // The config's per-turn caps are the kernel's own keys; a sub-agent's are what is left of its own.
          budget: delegated?.budget ?? config.budget,
          origin: delegated?.origin ?? { interface: message.interface, channel: message.channel, userId: message.userId },
          ...(audience === undefined ? {} : { audience }),
          ...(toolScope === undefined ? {} : { toolScope }),
          ...(delegated === undefined ? {} : { delegation: delegated.delegation })
        })
        const catalog = yield* skillsReader.catalog
        const terms = {
          message,
          toolScope,
          skills: catalog.skills.length,
          webSearch: config.webSearch,
          questionSurfaces: yield* questions.surfaces,
          verdict: (spec: ToolSpec) => policy.evaluate(spec, made.agentName, made.safetyMode),
          delegation: made.delegation,
          maxDepth: config.subagents.maxDepth
        }
        const offer = yield* offeredTools(yield* registry.listTools, terms, config, (mcp) =>
          Effect.map(toolkitOf(mcp), (kit) => kit.tokens))
        // What the turn offers is what a sub-agent it spawns may be given at most.
        const ctx: RunContextData = { ...made, offered: new Set(offer.listed.map((tool) => tool.spec.toolId)) }
        const turnModel = message.interface === heartbeatInterface ? heartbeat : { model, modelId: config.model ?? "" }
        // Secrets are taken out first, over the whole streamed text: the redactor must see a secret's pieces in one
        // run, and the NO_REPLY filter holds back the reply's last characters until the turn ends, across the
        // turn's other events (the next step's thinking), before which the redactor lets go of what it holds.
        const filtered = redactingEmit(noReplyEmit(input.emit), secrets)
        const ids = turnIdsOf(message)
        return {
          message,
          session,
          emit: (event: TurnEventBody) => filtered({ ...event, ...ids }),
          recorded: input.recorded ?? (() => Effect.void),
          ctx,
          windowStart,
          offer,
          loaded,
          skills: promptSkills(offer.listed, catalog),
          model: turnModel,
          stop
        } satisfies Turn
      })

    /** The turn's channel's messages that arrived since the last step, into the session and shown. */
    const injectArrived = (turn: Turn) =>
      Effect.flatMap(queue.takeInjectable(turn.message.conversation), (arrived) =>
        Effect.forEach(arrived, (injected) =>
          Effect.zipRight(recordUser(turn, injected), turn.emit(incomingOf(injected))), {
          discard: true
        }))

    /** The model's answer counted (budget, calibration) and in the session. */
    const recordAnswer = (turn: Turn, step: number, answer: StepResult, estimate: number, stepMs: number) =>
      Effect.gen(function*() {
        yield* logModelStep(step, answer.usage, stepMs, answer.calls.length)
        yield* context.calibrate(turn.model.modelId, estimate, answer.usage.inputTokens)
        yield* turn.ctx.budget.addPromptTokens(answer.usage.inputTokens)
        yield* turn.ctx.budget.addCostUsdCents(answer.usage.costUsdCents)
        yield* append(turn.session, new AssistantMessage({ text: answer.text, toolCalls: answer.calls, usage: answer.usage, at: yield* now }, checked))
      })

    /** One tool call through the kernel; its result, compacted, into the session and shown. */
    const runToolCall = (turn: Turn, call: StepCall, recorded: Effect.Effect<void> = Effect.void) =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        // An MCP tool offered by name is loaded by its first call: it runs (the executor checks its arguments against
        // its schema), and its definition is sent from the next step on.
        if (turn.offer.lazyMcp && isMcpToolId(call.name)) yield* Ref.update(turn.loaded, (loaded) => new Set([...loaded, call.name]))
        // Its audit event is in the event log's journal when this returns (a kill -9 now does not lose it): what
        // the model is shown was audited.
        const toolResult = yield* executor.executeIn(turn.ctx, call.name, call.params)
        const compacted = yield* compactor.compact({
          sessionId: turn.session.id,
          toolId: call.name,
          text: toolResultText(toolResult),
          isError: !toolResult.success
        }).pipe(Effect.catchAll((error) => Effect.succeed({ text: `${toolResultText(toolResult)}\n[not stored: ${error.message}]` })))
        const durationMs = (yield* Clock.currentTimeMillis) - started
        // Recorded whole or not at all: a stop that comes now must not leave the call without its one result.
        yield* Effect.uninterruptible(Effect.all([
          recordResult(turn, call, !toolResult.success, compacted.text, durationMs),
          recorded
        ], { discard: true }))
      })

    const recordResult = (turn: Turn, call: StepCall, isError: boolean, text: string, durationMs: number) =>
      Effect.gen(function*() {
        yield* append(turn.session, new ToolResultMessage({ toolCallId: call.id, toolName: call.name, isError, result: text, at: yield* now }, checked))
        yield* turn.emit({ type: "tool-result", id: call.id, name: call.name, isError, text, durationMs })
      })

    /**
     * The step's tool calls, ended by the turn's stop: stopped, the calls still running are interrupted (the executor's
     * tool fiber kills their processes) and each call left without a result gets one saying so, so the record stays
     * whole. Returns who stopped the turn, if anyone did.
     */
    const runToolCalls = (turn: Turn, calls: ReadonlyArray<StepCall>) =>
      Effect.gen(function*() {
        const done = yield* Ref.make<ReadonlySet<number>>(new Set())
        const all = Effect.forEach(calls, (call, i) => runToolCall(turn, call, Ref.update(done, (set) => new Set([...set, i]))), {
          concurrency: "unbounded",
          discard: true
        })
        const outcome = yield* turn.stop.guarded(all).pipe(Effect.as(Option.none()), Effect.catchTag("Stopped", Effect.succeedSome))
        if (Option.isNone(outcome)) return outcome
        const finished = yield* Ref.get(done)
        yield* Effect.forEach(calls, (call, i) => finished.has(i) ? Effect.void : recordResult(turn, call, true, cutShortText, 0), { discard: true })
        return outcome
      })

    /** The turn was stopped while the model streamed: what it had said is recorded, its calls with "not run" results. */
    const recordStopped = (turn: Turn, partial: StepResult) =>
      Effect.gen(function*() {
        if (partial.text === "" && partial.calls.length === 0) return
        yield* append(turn.session, new AssistantMessage({ text: partial.text, toolCalls: partial.calls, usage: partial.usage, at: yield* now }, checked))
        yield* Effect.forEach(partial.calls, (call) => recordResult(turn, call, true, notRunText, 0), { discard: true })
      })

    /** One model step: stopped by the budget, or the model streamed and its tool calls run; the tally after it. */
    const runStep = (turn: Turn, before: TurnTally): Effect.Effect<TurnTally, SessionError> =>
      Effect.gen(function*() {
        const asked = yield* turn.stop.stopped
        if (Option.isSome(asked)) return stopped(before, asked.value)
        const tally = nextStep(before)
        if (tally.step > 1) yield* injectArrived(turn)
        yield* turn.emit({ type: "thinking", step: tally.step })
        const budgetUsage = yield* turn.ctx.budget.usage
        const exhausted = budgetFailure(turn.ctx.budget.limits, budgetUsage)
        if (exhausted !== undefined) {
          yield* audit(turn.ctx, "kernel.budget.exceeded", "stopped", budgetUsage)
          return stopped(tally, exhausted)
        }
        // A lazy turn's toolkit grows as tool_search loads MCP tools; the prompt's <tools> stays as the turn began.
        const kit = yield* toolkitOf(definedTools(turn.offer, yield* Ref.get(turn.loaded)), turn.offer.listed, turn.offer.lazyMcp)
        const { estimate, prompt, recalled } = yield* stepPrompt({
          sessionId: turn.session.id,
          history: turn.session.history,
          kit,
          modelId: turn.model.modelId,
          query: turn.message.text,
          emit: turn.emit,
          windowStart: turn.windowStart,
          firstStep: tally.step === 1,
          recalled: tally.recalled,
          run: turn.ctx,
          skills: turn.skills
        })
        // The last step may only answer: no tools are offered.
        const offered = tally.step < config.maxSteps && turn.offer.listed.length > 0 ? kit.withHandler : undefined
        const modelStart = yield* Clock.currentTimeNanos
        const result = yield* Effect.either(
          modelStep({ ...turn.model, prices, prompt, toolkit: offered, toolIdOf: kit.toolIdOf, emit: turn.emit, stop: turn.stop })
        )
        const stepMs = Number((yield* Clock.currentTimeNanos) - modelStart) / 1e6
        const withRecall = withRecalled(tally, recalled)
        if (Either.isLeft(result)) {
          if (result.left._tag !== "StepStopped") return stopped(withRecall, modelStepFailure(result.left), stepMs)
          yield* recordStopped(turn, result.left.partial)
          const partialReply = redactSecretsInText(result.left.partial.text, secrets)
          return stopped({ ...withRecall, reply: partialReply }, result.left.by, stepMs)
        }
        const answer = result.right
        yield* recordAnswer(turn, tally.step, answer, estimate, stepMs)
        const reply = redactSecretsInText(answer.text, secrets)
        const after = answered(withRecall, { usage: answer.usage, modelMs: stepMs, reply, calls: answer.calls.length, maxSteps: config.maxSteps })
        if (answer.calls.length === 0) return after
        const stoppedBy = yield* runToolCalls(turn, answer.calls)
        return Option.isSome(stoppedBy) ? stopped(after, stoppedBy.value) : after
      })

    /** The failure into the session: part of the conversation's record, and what tells the model the message went unanswered. */
    const recordFailure = (turn: Turn, failure: TurnFailure) =>
      Effect.gen(function*() {
        yield* append(turn.session, new TurnFailedMessage({ failure: failure._tag, message: failure.message, turn: turn.message.turnId, at: yield* now }, checked))
      })

    /** How the turn ended, reported (error, audit, finish); the context's own work on it goes on in the background. */
    const finishTurn = (turn: Turn, tally: TurnTally) =>
      Effect.gen(function*() {
        const outcome = outcomeOf(tally)
        const { failure, usage } = outcome
        const encoded = failure === undefined ? undefined : encodeFailure(failure)
        if (failure !== undefined && encoded !== undefined) {
          yield* recordFailure(turn, failure)
          yield* turn.emit({ type: "error", message: failure.message, failure: encoded })
        }
        yield* audit(turn.ctx, "kernel.run.finished", failure === undefined ? "ok" : "error", {
          kind: "turn",
          usage,
          steps: outcome.steps,
          error: failure?.message ?? null,
          failure: encoded ?? null
        })
        // Segments and summaries of what the turn added, in the background: the reply is not held up for them.
        yield* context.afterTurn(turn.session.id, turn.session.history)
        yield* turn.emit({ type: "finish", reply: outcome.reply, steps: outcome.steps, usage, delivered: outcome.delivered })
        return outcome
      })

    /**
     * Whom the turn's model calls are charged to (the spend ceiling, `limits`): its conversation, person and channel;
     * the heartbeat's are the agent's own. Provided around the whole turn, so the background summary pass it starts
     * is charged to its conversation too.
     */
    const spendOf = (message: QueuedMessage): SpendAttributionData =>
      message.interface === heartbeatInterface
        ? { purpose: "heartbeat", conversationId: message.conversation }
        : turnAttribution("turn", { conversationId: message.conversation, interface: message.interface, channel: message.channel, userId: message.userId })

    /** One agent turn: the message recorded, then model steps (each with its tool calls) up to maxSteps. */
    const run = (input: TurnInput): Effect.Effect<TurnOutcome, SessionError> =>
      stops.during(input.message, (stop) => Effect.gen(function*() {
        // Stoppable from here to its end (TurnStops): looked at before each step, and ending the stream or the calls it meets.
        const turn = yield* openTurn(input, stop)
        yield* annotateKeptSpan(() => turnSpanAttributes(input.message, input.session.id, turn.model.modelId))
        // The turn's first event: what a channel knows the turn by (its conversation, its user).
        yield* turn.emit(incomingOf(input.message))
        // Journaled, not flushed: kern.db's readers of run events (usage) read finished turns, and the end's flush
        // brings this one in with it.
        yield* journalRunEvent(eventLog, turn.ctx, "kernel.run.started", "ok", { interface: input.message.interface, channel: input.message.channel })
        yield* recordUser(turn, input.message)
        const tally = yield* Effect.iterate(beginTally, {
          while: (tally) => !tally.ended && tally.step < config.maxSteps,
          body: (tally) => runStep(turn, tally)
        })
        return yield* finishTurn(turn, tally)
      })).pipe(
        Effect.provideService(SpendAttribution, spendOf(input.message)),
        loggedTurn(input.message, input.session.id),
        spannedTurnEnd,
        keptSpan("kern.agent.turn")
      )

    return { run } as const
  })
}) {}
