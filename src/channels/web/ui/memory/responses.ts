// The memory overlay's decoders of the routes' answers (GET /context/system, /notes/summary, /recall/*, /history,
// /sessions, /sessions/:id/activity): plain functions, so a test runs them on answers encoded with KernApi's schemas.
import type { ConversationPerson } from "../../../../users/conversationLabels.js"
import { arr, isObject, type Json, type JsonObject, num, obj, str } from "../wire.js"
import { approxTokens } from "./xmlSections.js"

export interface Section {
  readonly kind: string
  readonly source: string
  readonly text: string
  readonly chars: number
  readonly tokens: number
  /** Counted by the server's tokenizer, not estimated here from characters. */
  readonly counted: boolean
}

export interface SystemPrompt {
  /** Which request the prompt is of (absent from an older server). */
  readonly request: "next" | "last" | undefined
  readonly sections: ReadonlyArray<Section>
  readonly totalChars: number
  readonly totalTokens: number
  readonly counted: boolean
}

/** GET /context/system; an older server without token counts gets estimates from characters. */
export const decodeSystem = (u: Json | undefined): SystemPrompt | undefined => {
  if (!isObject(u)) return undefined
  const sections = arr(u, "sections").filter(isObject).map((s): Section => {
    const text = str(s, "text") ?? ""
    const chars = num(s, "chars") ?? text.length
    const tokens = num(s, "tokens")
    return { kind: str(s, "kind") ?? "section", source: str(s, "source") ?? "", text, chars, tokens: tokens ?? approxTokens(chars), counted: tokens !== undefined }
  })
  const totalChars = num(u, "totalChars") ?? sections.reduce((n, s) => n + s.chars, 0)
  const totalTokens = num(u, "totalTokens")
  const request = str(u, "request")
  return {
    request: request === "next" || request === "last" ? request : undefined,
    sections,
    totalChars,
    totalTokens: totalTokens ?? approxTokens(totalChars),
    counted: totalTokens !== undefined
  }
}


export interface Summary {
  readonly text: string
  readonly sources: ReadonlyArray<string>
  readonly fresh: boolean
}

/** `{ summary: null }` is a valid answer (nothing summarized yet): it decodes to null, not to a failure. */
export const decodeSummary = (u: Json | undefined): { readonly summary: Summary | null } | undefined => {
  if (!isObject(u) || !("summary" in u)) return undefined
  const s = obj(u, "summary")
  if (s === undefined) return { summary: null }
  return {
    summary: {
      text: str(s, "text") ?? "",
      sources: arr(s, "sources").filter((x): x is string => typeof x === "string"),
      fresh: s["fresh"] === true
    }
  }
}


const isoDate = /^\d{4}-\d{2}-\d{2}T/

/**
 * The stats route's figures (recall's RecallStats: messages, chunks, sessions, files, from, to, …): every number,
 * date and flag at the top level, and how embeddings are made.
 */
export const decodeStats = (u: Json | undefined): ReadonlyArray<readonly [string, string]> | undefined => {
  if (!isObject(u)) return undefined
  const figures = Object.entries(u).flatMap(([key, value]): ReadonlyArray<readonly [string, string]> =>
    typeof value === "number"
      ? [[key, value.toLocaleString()]]
      : typeof value === "string"
      ? [[key, isoDate.test(value) ? new Date(value).toLocaleString() : value]]
      : typeof value === "boolean"
      ? [[key, value ? "yes" : "no"]]
      : []
  )
  const embedding = obj(u, "embedding")
  const mode = embedding && str(embedding, "mode")
  const model = embedding && str(embedding, "model")
  return mode === undefined ? figures : [...figures, ["embedding", model === undefined ? mode : `${mode} (${model})`]]
}

export interface Hit {
  readonly text: string
  /** A conversation's hit, or a file's (knowledge/, notes/). */
  readonly source: "session" | "file"
  /** Where it is: the session of a conversation hit, the path of a file hit. */
  readonly where: string
  readonly startedAt: string | undefined
  readonly endedAt: string | undefined
  /** A conversation hit's messages, to open in the Sessions tab. */
  readonly range?: { readonly session: string; readonly start: number; readonly end: number } | undefined
}

/** GET /recall/search answers `{ query, mode, hits }`, each hit `{ source, sessionId, path, messageStart, … }`. */
export const decodeHits = (u: Json | undefined): ReadonlyArray<Hit> | undefined => {
  const list = Array.isArray(u) ? u : isObject(u) ? arr(u, "results").length > 0 ? arr(u, "results") : arr(u, "hits") : undefined
  if (list === undefined) return undefined
  return list.filter(isObject).map((h) => {
    const session = str(h, "sessionId")
    const path = str(h, "path")
    const start = num(h, "messageStart")
    const end = num(h, "messageEnd")
    return {
      text: str(h, "text") ?? "",
      source: path !== undefined && session === undefined ? "file" : "session",
      where: session ?? path ?? "",
      startedAt: str(h, "startedAt"),
      endedAt: str(h, "endedAt"),
      range: session !== undefined && start !== undefined && end !== undefined ? { session, start, end } : undefined
    }
  })
}


export interface Raw {
  readonly index: number
  readonly role: string
  readonly at: string
  readonly text: string
}

const messageText = (m: JsonObject): string => {
  const text = str(m, "text")
  const calls = arr(m, "toolCalls").filter(isObject).map((c) => `→ ${str(c, "name") ?? "tool"}(${JSON.stringify(c["params"] ?? null)})`)
  if (text !== undefined) return [text, ...calls].filter((s) => s.length > 0).join("\n")
  const result = m["result"]
  return typeof result === "string" ? result : JSON.stringify(result ?? null, null, 2)
}

export const decodePage = (u: Json | undefined): { readonly messages: ReadonlyArray<Raw>; readonly before: number | undefined } | undefined => {
  if (!isObject(u)) return undefined
  const messages = arr(u, "messages").filter(isObject).flatMap((entry): ReadonlyArray<Raw> => {
    const m = entry["message"]
    const index = num(entry, "index")
    if (!isObject(m) || index === undefined) return []
    const role = str(m, "_tag") ?? "?"
    return [{ index, role: role === "tool" ? `tool ${str(m, "toolName") ?? ""}` : role, at: str(m, "at") ?? "", text: messageText(m) }]
  })
  const next = u["nextBefore"]
  return { messages: messages.slice().reverse(), before: typeof next === "number" ? next : undefined }
}


export interface Session {
  readonly id: string
  readonly createdAt: string
  readonly modifiedAt: string
  readonly messages: number
  readonly bytes: number
  readonly current: boolean
  /** The conversation it is of: `main` (the operator's), `telegram-555`, … */
  readonly conversation: string
  /** Whom the conversation is with; null for a group or thread. */
  readonly person: ConversationPerson | null
  /** Where: `main`, `telegram DM`, `slack thread C0123`, … */
  readonly channel: string
}

const personOf = (s: JsonObject): ConversationPerson | null => {
  const person = obj(s, "person")
  const userId = person && str(person, "userId")
  return person === undefined || userId === undefined ? null : { userId, name: str(person, "name") ?? null }
}

/** GET /sessions, newest first; a server from before conversations has only the operator's (`main`). */
export const decodeSessions = (u: Json | undefined): ReadonlyArray<Session> | undefined => {
  if (!isObject(u)) return undefined
  const current = str(u, "currentSessionId")
  return arr(u, "sessions").filter(isObject).map((s) => ({
    id: str(s, "id") ?? "?",
    createdAt: str(s, "createdAt") ?? "",
    modifiedAt: str(s, "modifiedAt") ?? "",
    messages: num(s, "messages") ?? 0,
    bytes: num(s, "bytes") ?? 0,
    current: s["current"] === true || str(s, "id") === current,
    conversation: str(s, "conversation") ?? "main",
    person: personOf(s),
    channel: str(s, "channel") ?? "main"
  })).reverse()
}

/** The sessions of one conversation, newest first. */
export interface ConversationGroup {
  readonly conversation: string
  readonly person: ConversationPerson | null
  readonly channel: string
  readonly sessions: ReadonlyArray<Session>
}

/**
 * Sessions (newest first) grouped by conversation: the operator's (`main`) first, then the others by their newest
 * session, most recent first.
 */
export const byConversation = (sessions: ReadonlyArray<Session>): ReadonlyArray<ConversationGroup> => {
  const groups = new Map<string, Array<Session>>()
  for (const session of sessions) {
    const group = groups.get(session.conversation)
    if (group === undefined) groups.set(session.conversation, [session])
    else group.push(session)
  }
  const newest = (group: ReadonlyArray<Session>) => group.reduce((at, s) => (s.modifiedAt > at ? s.modifiedAt : at), "")
  return [...groups.values()]
    .map((group): ConversationGroup => ({ conversation: group[0]!.conversation, person: group[0]!.person, channel: group[0]!.channel, sessions: group }))
    .sort((a, b) =>
      a.conversation === "main" ? -1 : b.conversation === "main" ? 1 : newest(b.sessions).localeCompare(newest(a.sessions))
    )
}

export interface Activity {
  readonly total: number
  readonly roles: { readonly user: number; readonly assistant: number; readonly tool: number }
  readonly daily: ReadonlyArray<{ readonly label: string; readonly count: number }>
  readonly hourly: ReadonlyArray<{ readonly label: string; readonly count: number }>
}

export const decodeActivity = (u: Json | undefined): Activity | undefined => {
  if (!isObject(u)) return undefined
  const roles = obj(u, "roles")
  return {
    total: num(u, "total") ?? 0,
    roles: { user: (roles && num(roles, "user")) ?? 0, assistant: (roles && num(roles, "assistant")) ?? 0, tool: (roles && num(roles, "tool")) ?? 0 },
    // The last 30 active days keep the chart readable on a phone.
    daily: arr(u, "daily").filter(isObject).slice(-30).map((d) => ({ label: (str(d, "date") ?? "").slice(5), count: num(d, "count") ?? 0 })),
    hourly: arr(u, "hourly").filter(isObject).map((h) => ({ label: String(num(h, "hour") ?? 0), count: num(h, "count") ?? 0 }))
  }
}

export interface DailyNote {
  readonly path: string
  readonly date: string
  readonly text: string
}

/** GET /notes: the latest daily notes, newest first, and how many there are in all. */
export const decodeDailyNotes = (u: Json | undefined): { readonly notes: ReadonlyArray<DailyNote>; readonly total: number } | undefined => {
  if (!isObject(u) || !Array.isArray(u["notes"])) return undefined
  const notes = arr(u, "notes").filter(isObject).flatMap((n): ReadonlyArray<DailyNote> => {
    const path = str(n, "path")
    const text = str(n, "text")
    return path === undefined || text === undefined ? [] : [{ path, date: str(n, "date") ?? path, text }]
  })
  return { notes, total: num(u, "total") ?? notes.length }
}

/** A range of a session's messages: a recall hit's, which the Sessions tab opens at. */
export type MessageRange = NonNullable<Hit["range"]>
