import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { AgentConfig } from "../../../config/AgentConfig.js"
import { ContextWindow } from "../../../context/ContextWindow.js"
import { nextRequest } from "../../../context/nextRequest.js"
import type { Segment } from "../../../context/Segment.js"
import { ToolRegistry } from "../../../kernel/ToolRegistry.js"
import { nextTurnTools } from "../../../turn/offeredTools.js"
import { uncachedFiles } from "../../../memory/fileCache.js"
import { AgentRuntime } from "../../../runtime/AgentRuntime.js"
import { SessionStore } from "../../../session/SessionStore.js"
import { makeSkills } from "../../../skills/Skills.js"
import { Questions } from "../../../tools/Questions.js"
import type { SegmentInfo } from "../api.js"
import { notFound, serverError } from "../ApiError.js"
import { sessionFile, systemSections } from "../inspect.js"
import { KernApi } from "../KernApi.js"

const segmentInfo = (injected: ReadonlySet<number>) => (segment: Segment): SegmentInfo => ({
  id: segment.id,
  level: segment.level,
  start: segment.start,
  end: segment.end,
  tokens: segment.tokens,
  summaryTokens: segment.summaryTokens,
  summary: segment.summary,
  firstAt: segment.firstAt,
  lastAt: segment.lastAt,
  parentId: segment.parentId,
  inContext: injected.has(segment.id)
})

/** The next request's system prompt and token breakdown, and a session's segment tree. */
export const layer = HttpApiBuilder.group(KernApi, "context", (handlers) =>
  Effect.gen(function*() {
    const { config, paths } = yield* AgentConfig
    const runtime = yield* AgentRuntime
    const sessions = yield* SessionStore
    const registry = yield* ToolRegistry
    const context = yield* ContextWindow
    const skills = yield* makeSkills
    const questions = yield* Questions

    /**
     * The request the operator's next turn would send in the current session (before its own message), planned and
     * built as the turn builds it (ContextWindow.preview), memory files read afresh.
     */
    const next = Effect.gen(function*() {
      const session = yield* runtime.currentSession
      const offer = yield* nextTurnTools(yield* registry.listTools, yield* skills.catalog, config, yield* context.counter, yield* questions.surfaces)
      return yield* nextRequest({
        sessionId: session.id,
        history: session.history,
        tools: offer,
        skills: offer.skills,
        files: yield* uncachedFiles,
        modelId: config.model ?? "",
        // The inbox's count, or none said when kern.db cannot tell (the figures stand all the same).
        waiting: Math.max(0, (yield* runtime.status).inbox)
      })
    })

    const breakdown = Effect.map(next, (request) => ({ ...request.breakdown, leftOut: request.leftOut, toolsCost: request.toolsCost }))

    return handlers
      .handle("system", () => Effect.zipWith(next, context.counter, (request, count) => systemSections(request, count)))
      .handle("next", () =>
        Effect.map(breakdown, (current) => {
          const injected = new Set(current.injected.map((segment) => segment.id))
          return {
            request: "next" as const,
            sessionId: current.sessionId,
            messages: current.messages,
            cut: current.cut,
            budget: { maxContextTokens: current.budget.maxContextTokens, summary: current.budget.summary, raw: current.budget.raw },
            tokens: current.tokens,
            toolsCost: current.toolsCost,
            injected: current.injected.map(segmentInfo(injected)),
            leftOut: current.leftOut
          }
        }))
      // A session's segment tree (the current one by default), each segment marked when its summary is in the context.
      .handle("segments", ({ urlParams }) =>
        Effect.gen(function*() {
          const current = yield* runtime.currentSession
          const id = urlParams.session ?? current.id
          yield* sessionFile(paths.sessionsDir, id, "session")
          const all = yield* sessions.list.pipe(Effect.mapError(serverError))
          const listed = all.find((s) => s.id === id)
          if (listed === undefined) return yield* notFound(`no session ${id}`)
          const isCurrent = id === current.id
          const now = isCurrent ? Option.some(yield* breakdown) : Option.none()
          const injected = new Set(Option.match(now, { onNone: () => [], onSome: (b) => b.injected.map((s) => s.id) }))
          const segments = yield* context.segments(id)
          return {
            sessionId: id,
            messages: isCurrent ? yield* current.history.size : listed.messages,
            cut: Option.isSome(now) ? now.value.cut : yield* context.storedCut(id),
            segments: segments.map(segmentInfo(injected))
          }
        }))
  }))
