import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Console, Effect, Layer, Option } from "effect"
import * as Layers from "../runtime/layers.js"
import { AgentConfig } from "../config/AgentConfig.js"
import { ContextWindow } from "../context/ContextWindow.js"
import { nextRequest } from "../context/nextRequest.js"
import { makeSkills } from "../skills/Skills.js"
import type { Segment } from "../context/Segment.js"
import * as Summarizer from "../context/Summarizer.js"
import type { SystemSection } from "../context/systemPrompt.js"
import * as SegmentStoreSql from "../context/SegmentStoreSql.js"
import { ToolRegistry } from "../kernel/ToolRegistry.js"
import { nextTurnTools } from "../turn/offeredTools.js"
import { makeFileCache } from "../memory/fileCache.js"
import * as NotesSummary from "../memory/NotesSummary.js"
import { SessionHistory } from "../context/SessionHistory.js"
import * as InboxSql from "../runtime/Inbox.js"
import * as SessionIndex from "../session/SessionIndex.js"
import { SessionStore } from "../session/SessionStore.js"
import { agentRuntimeLayer } from "./agentLayer.js"
import { CommandFailed } from "./errors.js"
import { counted } from "../config/counted.js"
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
  // The context plans from the summaries there are: it makes none here.
  const context = ContextWindow.Default.pipe(Layer.provide(Summarizer.layerInspectOnly), Layer.provideMerge(SegmentStoreSql.layer))
  return Layer.mergeAll(
    context,
    SessionStore.Default.pipe(Layer.provide(SessionIndex.layer)),
    notes,
    InboxSql.layerSql
  ).pipe(Layer.provideMerge(kernel))
}

/** The session asked for, or the newest; none in a folder where no turn has run yet. */
const sessionId = (requested: Option.Option<string>) =>
  Effect.gen(function*() {
    if (Option.isSome(requested)) return requested
    return yield* (yield* SessionStore).activeId.pipe(Effect.mapError(failed))
  })

/** The session asked for, or the newest, for the commands that need one. */
const existingSession = (requested: Option.Option<string>) =>
  Effect.flatMap(sessionId(requested), Option.match({
    onNone: () => new CommandFailed({ message: "no session yet: no turn has run in this folder" }),
    onSome: Effect.succeed
  }))

const number = (n: number) => n.toLocaleString("en-US")

const range = (segment: Pick<Segment, "start" | "end">) => `${number(segment.start)}–${number(segment.end - 1)}`

/**
 * The request the operator's next turn in the session would send (before its own message): ContextWindow.preview,
 * which plans and builds it as the turn does, with nothing moved or written. `found`: the session, resolved by the
 * caller; none on a new agent (the first turn's request).
 */
const inspect = (found: Option.Option<string>) =>
  Effect.gen(function*() {
    const { config } = yield* AgentConfig
    const store = yield* SessionStore
    const context = yield* ContextWindow
    // Before the first turn there is no session: the first request is the system prompt and the tools, no messages.
    const history = yield* Option.match(found, {
      onNone: () => SessionHistory.make([], { sessionId: "", maxToolResultChars: config.maxToolResultChars, count: context.counter }),
      onSome: (id) =>
        Effect.flatMap(context.cutOf(id), (from) =>
          Effect.flatMap(store.load(id, Option.getOrUndefined(from)).pipe(Effect.mapError(failed)), context.historyOf))
    })
    const id = Option.getOrElse(found, () => "")
    const offer = yield* nextTurnTools(yield* (yield* ToolRegistry).listTools, yield* (yield* makeSkills).catalog, config, yield* context.counter, new Set())
    const request = yield* nextRequest({
      sessionId: id,
      history,
      tools: offer,
      skills: offer.skills,
      files: yield* makeFileCache,
      modelId: config.model ?? "",
      waiting: yield* (yield* InboxSql.Inbox).size.pipe(Effect.mapError(failed))
    })
    return { ...request, session: found, segments: yield* context.segments(id), count: yield* context.counter, model: config.model ?? "" }
  })

const sectionRows = (sections: ReadonlyArray<SystemSection>, count: (text: string) => number) =>
  sections.map((section) => [section.kind, section.source, number(count(section.text))])

/**
 * `kern context show`: the next request (before its turn's message), as the turn would build it: the system prompt by
 * section with token counts, the raw window, the cut and the summaries in use.
 */
export const show = (args: ContextArgs) =>
  Effect.gen(function*() {
    const { breakdown, count, leftOut, model, sections, session, toolsCost } = yield* inspect(yield* sessionId(args.session))
    const { budget, tokens } = breakdown
    if (args.json) {
      return yield* Console.log(JSON.stringify({
        request: "next",
        ...breakdown,
        sessionId: Option.getOrNull(session),
        model,
        system: sections.map((section) => ({ ...section, tokens: count(section.text) })),
        toolsCost,
        leftOut
      }))
    }
    const lines = [
      Option.match(session, {
        onNone: () => "no session yet: the first turn's request is the system prompt and the tools, with no messages before its own",
        onSome: (id) => `session ${id}: ${counted(breakdown.messages, "message", "messages", number(breakdown.messages))}`
      }) + `, model ${model || "(none)"}` +
      (breakdown.calibration === 1 ? "" : ` (counts corrected ×${breakdown.calibration.toFixed(2)})`),
      `next request (before its message): ${number(tokens.total)} of ${number(budget.maxContextTokens)} tokens — ` +
      `system ${number(tokens.system)}, ` +
      `tools ${number(tokens.tools)}, summaries ${number(tokens.summary)}, raw messages ${number(tokens.raw)}`,
      `tool definitions: builtin ${number(toolsCost.builtin)}, MCP ${number(toolsCost.mcp)}` +
      (toolsCost.lazyTools === 0
        ? ""
        : `; ${counted(toolsCost.lazyTools, "MCP tool", "MCP tools", number(toolsCost.lazyTools))} offered by name (over mcpToolBudget), ` +
          `loaded by tool_search: ${number(toolsCost.saved)} tokens saved`),
      `not in these figures: ${leftOut.join("; ")}`,
      `budget for the conversation: ${number(budget.conversation)} — summaries ${number(budget.summary)}, raw ${number(budget.raw)}`,
      ...(tokens.total * breakdown.calibration > budget.maxContextTokens
        ? ["over the window: the next turn summarizes the older messages first (or now: kern segments rebuild)"]
        : []),
      ...(breakdown.fallback
        ? ["fallback cut: the summaries lag or fail, so the raw window starts past them, at a user message; the messages " +
          "in between are only in the session file and recall until the summaries catch up"]
        : []),
      breakdown.messages === 0
        ? "raw window: empty (no messages yet)"
        : breakdown.cut === 0
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
    const { breakdown, segments } = yield* inspect(Option.some(yield* existingSession(args.session)))
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
    const id = yield* existingSession(args.session)
    const session = yield* store.load(id).pipe(Effect.mapError(failed))
    const history = yield* context.historyOf(session)
    yield* Console.error(
      `kern: rebuilding the segments of session ${id} (${counted(session.messages.length, "message", "messages", number(session.messages.length))})`
    )
    const segments = yield* context.rebuild(id, history, (line) => Console.error(`kern: ${line}`)).pipe(Effect.mapError(failed))
    const unsummarized = segments.filter((s) => s.summary === null).length
    const levels = Math.max(-1, ...segments.map((s) => s.level)) + 1
    yield* Console.log(
      `${counted(segments.filter((s) => s.level === 0).length, "segment")}, ${counted(levels, "level")}` +
        (unsummarized === 0 ? "" : `; ${unsummarized} not summarized (the next turn retries them)`)
    )
    if (unsummarized > 0) return yield* new CommandFailed({ message: `${counted(unsummarized, "segment")} could not be summarized` })
  }).pipe(
    Effect.provide(agentRuntimeLayer(args.dir, {
      command: "kern segments rebuild",
      waitSeconds: args.wait,
      whileAgentRuns: "stop it (kern stop, or Ctrl-C where it runs), run kern segments rebuild, then start it again"
    }))
  )
