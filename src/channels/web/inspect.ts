import { DateTime, Effect, Option } from "effect"
import * as NodePath from "node:path"
import { agentZone } from "../../session/envelope.js"
import { AgentConfig } from "../../config/AgentConfig.js"
import type { NextRequest } from "../../context/nextRequest.js"
import type { TokenCounter } from "../../model/tokenizer.js"
import type { SessionMessage } from "../../session/messages.js"
import { orIfMissing } from "../../storage/missingFile.js"
import type { ActivityResponse, HistoryItem, SystemPromptResponse, SystemSection } from "./api.js"
import { badRequest, notFound } from "./ApiError.js"
import { foldSessionMessages } from "./sessionLines.js"

const sessionIdPattern = /^[A-Za-z0-9._-]+$/

/** A session's file, refusing ids that could name anything else (`..`, slashes). */
export const sessionFile = (sessionsDir: string, id: string, field = "id") =>
  sessionIdPattern.test(id) && !id.startsWith(".")
    ? Effect.succeed(NodePath.join(sessionsDir, `${id}.jsonl`))
    : Effect.fail(badRequest(field, `${field}: not a session id`))

const missingSession = (id: string) => notFound(`no session ${id}`)

/** An integer query parameter within bounds, or the default when absent. */
export const intParam = (value: string | undefined, field: string, min: number, max: number, fallback: number) => {
  if (value === undefined || value === "") return Effect.succeed(fallback)
  const n = Number(value)
  return Number.isInteger(n) && n >= min && n <= max
    ? Effect.succeed(n)
    : Effect.fail(badRequest(field, `${field}: expected an integer from ${min} to ${max}, got ${JSON.stringify(value)}`))
}

/** The page of a session's messages before `before` (the newest page without it), streaming the file once. */
export const historyPage = (path: string, id: string, limit: number, before: number | undefined) =>
  foldSessionMessages(path, { total: 0, window: [] as Array<HistoryItem> }, (acc, message, index) => {
    acc.total = index + 1
    if (before === undefined || index < before) {
      acc.window.push({ index, message })
      if (acc.window.length > limit) acc.window.shift()
    }
    return acc
  }).pipe(
    orIfMissing(() => undefined),
    Effect.flatMap((page) => page === undefined ? Effect.fail(missingSession(id)) : Effect.succeed(page)),
    Effect.map(({ total, window }) => {
      const first = window[0]
      return {
        sessionId: id,
        messages: window,
        total,
        nextBefore: first === undefined || first.index === 0 ? null : first.index
      }
    }),
    Effect.withSpan("kern.web.history")
  )

/** A failed turn's entry counts with the assistant's messages: it stands where the answer would have. */
const roleOf = (message: SessionMessage): "user" | "assistant" | "tool" => message._tag === "turn-failed" ? "assistant" : message._tag

/** Daily and hourly message counts in the agent's timezone, and messages per role, streaming the file once. */
export const sessionActivity = (path: string, id: string) =>
  Effect.gen(function*() {
    const { config } = yield* AgentConfig
    const zone = agentZone(config.timezone)
    const initial = { total: 0, roles: { user: 0, assistant: 0, tool: 0 }, daily: new Map<string, number>(), hourly: new Array<number>(24).fill(0) }
    const counted = yield* foldSessionMessages(path, initial, (acc, message) => {
      acc.total += 1
      acc.roles[roleOf(message)] += 1
      const at = DateTime.make(message.at)
      if (Option.isSome(at)) {
        const parts = DateTime.toParts(DateTime.unsafeMakeZoned(at.value, { timeZone: zone }))
        const date = `${parts.year}-${String(parts.month).padStart(2, "0")}-${String(parts.day).padStart(2, "0")}`
        acc.daily.set(date, (acc.daily.get(date) ?? 0) + 1)
        acc.hourly[parts.hours] = (acc.hourly[parts.hours] ?? 0) + 1
      }
      return acc
    }).pipe(orIfMissing(() => undefined))
    if (counted === undefined) return yield* Effect.fail(missingSession(id))
    return {
      sessionId: id,
      total: counted.total,
      roles: counted.roles,
      daily: [...counted.daily].sort(([a], [b]) => a.localeCompare(b)).map(([date, count]) => ({ date, count })),
      hourly: counted.hourly.map((count, hour) => ({ hour, count }))
    } satisfies ActivityResponse
  }).pipe(Effect.withSpan("kern.web.activity"))

/**
 * The system prompt of a request, section by section with its size in characters and tokens, and the whole as sent
 * (`system`: the sections joined).
 */
export const systemSections = (
  request: Pick<NextRequest, "sections" | "system" | "leftOut">,
  count: TokenCounter
): SystemPromptResponse => ({
  request: "next",
  leftOut: request.leftOut,
  sections: request.sections.map((section): SystemSection => ({ ...section, chars: section.text.length, tokens: count(section.text) })),
  totalChars: request.system.length,
  totalTokens: count(request.system)
})
