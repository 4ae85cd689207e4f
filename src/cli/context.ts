import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Clock, Console, Effect, Layer, Option } from "effect"
import * as Layers from "../agent/layers.js"
import { SessionHistory } from "../context/SessionHistory.js"
import { promptToolsOf, renderSystemPrompt, type SystemSection, systemSectionsFrom } from "../context/systemPrompt.js"
import { AgentConfig } from "../config/AgentConfig.js"
import { breakdownOf } from "../context/breakdown.js"
import { ContextWindow } from "../context/ContextWindow.js"
import { makeState, planContext } from "../context/plan.js"
import { rawWindowStart, type Segment } from "../context/Segment.js"
import { SegmentStore } from "../context/SegmentStore.js"
import { admission, healthOf, summarizerOf } from "../context/summarizerHealth.js"
import * as SegmentStoreSqlite from "../context/SegmentStoreSqlite.js"
import { toolDefinitionsTokens } from "../context/toolTokens.js"
import { toolkitFor } from "../kernel/aiTools.js"
import { ToolRegistry } from "../kernel/ToolRegistry.js"
import { makeFileCache } from "../memory/fileCache.js"
import * as NotesSummary from "../memory/NotesSummary.js"
import { Tokenizer } from "../model/tokenizer.js"
import * as SessionIndex from "../session/SessionIndex.js"
import { SessionStore } from "../session/SessionStore.js"
import { agentRuntimeLayer } from "./agentLayer.js"
import { CommandFailed } from "./errors.js"
import { table } from "./table.js"

export interface ContextArgs {
  readonly dir: string
  readonly json: boolean
  readonly session: Option.Option<string>
}

export interface RebuildArgs {
  readonly dir: string
  readonly wait: number
  readonly session: Option.Option<string>
}

const stderr: Layers.Report = (line) => Console.error(`kern: ${line}`)

const failed = (error: { readonly message: string }) => new CommandFailed({ message: error.message })

/**
 * Read-only inspection: config, kern.db, the kernel's tools, the segments and the session files, with no folder lock
 * (it works while the agent runs). The notes summary is the stored one, or none without a model to make it.
 */
const inspectLayer = (dir: string) => {
  const kernel = Layers.kernelAgentLayer(dir, stderr)
  const notes = NotesSummary.layer.pipe(Layer.provide(NodeHttpClient.layerUndici), Layer.orElse(() => NotesSummary.layerNone))
  return Layer.mergeAll(
    SegmentStoreSqlite.layer,
    SessionStore.Default.pipe(Layer.provide(SessionIndex.layer)),
    Tokenizer.Default,
    notes
  ).pipe(Layer.provideMerge(kernel))
}

/** The session asked for, or the newest. */
const sessionId = (requested: Option.Option<string>) =>
  Effect.gen(function*() {
    if (Option.isSome(requested)) return requested.value
    const active = yield* (yield* SessionStore).activeId.pipe(Effect.mapError(failed))
    if (Option.isNone(active)) return yield* new CommandFailed({ message: "no session yet: nothing is in the context" })
    return active.value
  })

const number = (n: number) => n.toLocaleString("en-US")

const range = (segment: Pick<Segment, "start" | "end">) => `${number(segment.start)}–${number(segment.end - 1)}`

/** What the next model call of the session would get, planned as the turn plans it (nothing moved or written). */
const inspect = (requested: Option.Option<string>) =>
  Effect.gen(function*() {
    const loaded = yield* AgentConfig
    const { config } = loaded
    const id = yield* sessionId(requested)
    const segments = yield* SegmentStore
    const store = yield* SessionStore
    const count = yield* Effect.flatMap(Tokenizer, (tokenizer) => tokenizer.counter)
    const cut = yield* segments.getCut(id).pipe(Effect.mapError(failed))
    const from = Option.getOrUndefined(Option.filter(cut, (c) => c.messageIndex > 0 && c.byteOffset > 0))
    const session = yield* store.load(id, from).pipe(Effect.mapError(failed))
    const history = yield* SessionHistory.make(session.messages, {
      sessionId: id,
      base: session.firstIndex,
      maxToolResultChars: config.maxToolResultChars,
      count
    })
    const tools = yield* (yield* ToolRegistry).listTools
    const toolsTokens = toolDefinitionsTokens(Object.values(toolkitFor(tools).toolkit.tools), count)
    const files = yield* makeFileCache
    const sections = yield* systemSectionsFrom(files, { tools: promptToolsOf(tools) })
    const system = renderSystemPrompt(sections)
    const ratio = Option.getOrElse(yield* segments.getCalibration(config.model ?? "").pipe(Effect.mapError(failed)), () => 1)
    const state = makeState(
      yield* segments.list(id).pipe(Effect.mapError(failed)),
      rawWindowStart(cut),
      Option.match(cut, { onNone: () => 0, onSome: (c) => c.messageIndex })
    )
    // As the turn plans: the fallback cut where it would summarize first, only while the summary model is failing.
    const health = healthOf(yield* segments.getHealth.pipe(Effect.mapError(failed)), summarizerOf(config))
    const fallback = admission(health, yield* Clock.currentTimeMillis) !== "open"
    const planned = planContext({ config, state, window: yield* history.window, system, toolsTokens, ratio, count, fallback })
    const breakdown = breakdownOf(id, yield* history.size, planned, toolsTokens, ratio)
    return { breakdown, sections, segments: state.segments, count, model: config.model ?? "" }
  })

const sectionRows = (sections: ReadonlyArray<SystemSection>, count: (text: string) => number) =>
  sections.map((section) => [section.kind, section.source, number(count(section.text))])

/** `kern context show`: the system prompt by section with token counts, the raw window, the cut and the summaries in use. */
export const show = (args: ContextArgs) =>
  Effect.gen(function*() {
    const { breakdown, count, model, sections } = yield* inspect(args.session)
    const { budget, tokens } = breakdown
    if (args.json) {
      return yield* Console.log(JSON.stringify({
        ...breakdown,
        model,
        system: sections.map((section) => ({ ...section, tokens: count(section.text) }))
      }))
    }
    const lines = [
      `session ${breakdown.sessionId}: ${number(breakdown.messages)} messages, model ${model || "(none)"}` +
      (breakdown.calibration === 1 ? "" : ` (counts corrected ×${breakdown.calibration.toFixed(2)})`),
      `context: ${number(tokens.total)} of ${number(budget.maxContextTokens)} tokens — system ${number(tokens.system)}, ` +
      `tools ${number(tokens.tools)}, summaries ${number(tokens.summary)}, raw messages ${number(tokens.raw)}`,
      `budget for the conversation: ${number(budget.conversation)} — summaries ${number(budget.summary)}, raw ${number(budget.raw)}`,
      ...(tokens.total * breakdown.calibration > budget.maxContextTokens
        ? ["over the window: the next turn summarizes the older messages first (or now: kern segments rebuild)"]
        : []),
      ...(breakdown.fallback
        ? ["fallback cut: the summaries lag or fail, so the raw window starts past them, at a user message; the messages " +
          "in between are only in the session file and recall until the summaries catch up"]
        : []),
      breakdown.cut === 0
        ? "raw window: every message (nothing trimmed)"
        : `raw window: messages ${number(breakdown.cut)}–${number(breakdown.messages - 1)}; 0–${number(breakdown.cut - 1)} ` +
          "are summarized (the session file and recall keep them whole)",
      "",
      "system prompt:",
      table(["section", "source", "tokens"], sectionRows(sections, count)),
      ""
    ]
    if (breakdown.injected.length === 0) {
      lines.push(breakdown.cut === 0 ? "conversation summary: none (nothing is trimmed)" : "conversation summary: none yet")
    } else {
      lines.push("conversation summary:")
      lines.push(table(
        ["level", "messages", "first", "last", "tokens"],
        breakdown.injected.map((s) => [`L${s.level}`, range(s), s.firstAt, s.lastAt, number(s.summaryTokens)])
      ))
    }
    for (const gap of breakdown.uncovered) {
      lines.push(`not covered (over the summary budget): messages ${range(gap)}`)
    }
    yield* Console.log(lines.join("\n"))
  }).pipe(Effect.provide(inspectLayer(args.dir)))

const segmentRow = (segment: Segment, injected: ReadonlySet<number>) => [
  `L${segment.level}`,
  String(segment.id),
  range(segment),
  `${segment.firstAt.slice(0, 16)} → ${segment.lastAt.slice(0, 16)}`,
  segment.summary === null
    ? `${number(segment.tokens)} → not summarized`
    : `${number(segment.tokens)} → ${number(segment.summaryTokens)} (${(segment.tokens / Math.max(1, segment.summaryTokens)).toFixed(1)}:1)`,
  injected.has(segment.id) ? "in context" : ""
]

/** `kern segments list`: the session's segment tree, highest level first, each with its compression and whether it is in the context. */
export const list = (args: ContextArgs) =>
  Effect.gen(function*() {
    const { breakdown, segments } = yield* inspect(args.session)
    const injected = new Set(breakdown.injected.map((s) => s.id))
    if (args.json) {
      return yield* Console.log(JSON.stringify({
        sessionId: breakdown.sessionId,
        messages: breakdown.messages,
        cut: breakdown.cut,
        segments: segments.map((s) => ({ ...s, inContext: injected.has(s.id) }))
      }))
    }
    if (segments.length === 0) {
      return yield* Console.log(
        `no segments yet in session ${breakdown.sessionId} (${number(breakdown.messages)} messages): they are made after ` +
          "turns once 10,000 tokens of conversation have gathered (or now: kern segments rebuild)"
      )
    }
    const ordered = [...segments].sort((a, b) => b.level - a.level || a.start - b.start)
    yield* Console.log([
      `session ${breakdown.sessionId}: ${number(breakdown.messages)} messages, raw from ${number(breakdown.cut)}`,
      table(["level", "id", "messages", "time", "tokens → summary", ""], ordered.map((s) => segmentRow(s, injected)))
    ].join("\n"))
  }).pipe(Effect.provide(inspectLayer(args.dir)))

/**
 * `kern segments rebuild`: forgets the session's segments and makes them again from the whole session file, holding
 * the folder (the running agent must stop first), with progress on stderr.
 */
export const rebuild = (args: RebuildArgs) =>
  Effect.gen(function*() {
    const store = yield* SessionStore
    const context = yield* ContextWindow
    const id = yield* sessionId(args.session)
    const session = yield* store.load(id).pipe(Effect.mapError(failed))
    const history = yield* context.historyOf(session)
    yield* Console.error(`kern: rebuilding the segments of session ${id} (${number(session.messages.length)} messages)`)
    const segments = yield* context.rebuild(id, history, (line) => Console.error(`kern: ${line}`)).pipe(Effect.mapError(failed))
    const unsummarized = segments.filter((s) => s.summary === null).length
    const levels = Math.max(-1, ...segments.map((s) => s.level)) + 1
    yield* Console.log(
      `${segments.filter((s) => s.level === 0).length} segments, ${levels} level${levels === 1 ? "" : "s"}` +
        (unsummarized === 0 ? "" : `; ${unsummarized} not summarized (the next turn retries them)`)
    )
    if (unsummarized > 0) return yield* new CommandFailed({ message: `${unsummarized} segments could not be summarized` })
  }).pipe(
    Effect.provide(agentRuntimeLayer(args.dir, { command: "kern segments rebuild", waitSeconds: args.wait }))
  )
