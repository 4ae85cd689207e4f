/**
 * What the three importers share in turning a source's conversation into kern's messages: times that only move
 * forward, caps on what one message may hold, each tool call followed by its result (as kern's sessions hold them),
 * and a source's JSON lines read one by one, a bad line skipped with its number.
 */
import { Either, Schema } from "effect"
import { createHash } from "node:crypto"
import { maxJsonDepth, parseJsonBounded } from "../config/json.js"
import { AssistantMessage, type SessionMessage, type ToolCall, ToolResultMessage, UserMessage, valueText } from "../session/messages.js"
import type { ImportKind } from "./ImportPlan.js"

/** The most characters one imported message's text keeps (the rest is cut, and the cut is said in the text). */
export const maxTextChars = 200_000
/** The most characters a tool result keeps: kern's own results are cut far shorter before the model reads them. */
export const maxResultChars = 50_000

/** `text` cut to `max` characters, saying how much was cut; `cut` is told when it was. */
export const capped = (text: string, max: number, cut?: () => void): string => {
  if (text.length <= max) return text
  cut?.()
  return `${text.slice(0, max)}\n[… ${text.length - max} more characters left out by kern import]`
}

/**
 * The conversation an imported session is filed under: `import-<kind>-<the source's id, made file-safe>-<hash>`. The
 * hash is of the kind and the exact id, so two ids that read alike once made safe stay apart, and finding the
 * conversation among the session files says whether that source conversation was imported already (kern.db not
 * needed: it holds for a folder whose kern.db was lost).
 */
export const importConversation = (kind: ImportKind, sourceId: string): string => {
  const safe = sourceId.replace(/[^A-Za-z0-9-]/g, "-").replace(/-+/g, "-").replace(/^-|-$/g, "").slice(0, 40)
  const hash = createHash("sha256").update(`${kind}\u0000${sourceId}`).digest("hex").slice(0, 10)
  return `import-${kind}-${safe === "" ? "" : `${safe}-`}${hash}`
}

/** Instants for messages: a message without a time of its own (or with one earlier than the last) gets the last one. */
export const makeClock = (startMs: number) => {
  let last = startMs
  return {
    /** The ISO time of a message that says `ms` (or nothing). */
    at: (ms?: number | undefined): string => {
      if (ms !== undefined && Number.isFinite(ms) && ms > last && ms < 8.64e15) last = ms
      return new Date(last).toISOString()
    },
    get lastMs() {
      return last
    }
  }
}

/** A time the source wrote (ISO text or epoch milliseconds) as milliseconds, if it is one. */
export const timeOf = (value: unknown): number | undefined => {
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return value < 1e11 ? value * 1000 : value
  if (typeof value === "string") {
    const ms = Date.parse(value)
    return Number.isNaN(ms) ? undefined : ms
  }
  return undefined
}

/** A counter of things left out or kept as text, turned into one note line each at the end. */
export const makeNotes = () => {
  const counts = new Map<string, number>()
  return {
    add: (what: string, n = 1) => counts.set(what, (counts.get(what) ?? 0) + n),
    lines: (): ReadonlyArray<string> => [...counts].map(([what, n]) => `${n} × ${what}`)
  }
}
export type Notes = ReturnType<typeof makeNotes>

/** A tool call's arguments kept as the source had them, when they are JSON; else as text. */
export const paramsOf = (value: unknown): unknown => {
  if (value === undefined) return {}
  const text = JSON.stringify(value)
  return text === undefined ? valueText(value) : value
}

/**
 * The messages in kern's order: each assistant message's tool calls answered by results right after it. A call the
 * source has no result for gets one saying so (an error result); a result whose call is not known becomes the
 * assistant's text, never lost.
 */
export const pairCalls = (messages: ReadonlyArray<SessionMessage>, kind: ImportKind, notes: Notes): Array<SessionMessage> => {
  const out: Array<SessionMessage> = []
  let i = 0
  while (i < messages.length) {
    const message = messages[i++]!
    if (message._tag === "tool") {
      notes.add("tool result without its call (kept as text)")
      out.push(new AssistantMessage({ text: `[result of ${message.toolName}, whose call the ${kind} session does not hold]\n${valueText(message.result)}`, toolCalls: [], at: message.at }))
      continue
    }
    out.push(message)
    if (message._tag !== "assistant" || message.toolCalls.length === 0) continue
    const results: Array<ToolResultMessage> = []
    while (i < messages.length && messages[i]!._tag === "tool") results.push(messages[i++] as ToolResultMessage)
    const taken = new Array<boolean>(results.length).fill(false)
    for (const call of message.toolCalls) {
      const k = results.findIndex((r, j) => !taken[j] && r.toolCallId === call.id)
      if (k === -1) {
        notes.add("tool call without a result in the source (recorded as such)")
        out.push(noResult(call, kind, message.at))
      } else {
        taken[k] = true
        out.push(results[k]!)
      }
    }
    results.forEach((r, j) => {
      if (taken[j]) return
      notes.add("tool result without its call (kept as text)")
      out.push(new AssistantMessage({ text: `[result of ${r.toolName}, whose call the ${kind} session does not hold]\n${valueText(r.result)}`, toolCalls: [], at: r.at }))
    })
  }
  return out
}

const noResult = (call: ToolCall, kind: ImportKind, at: string) =>
  new ToolResultMessage({ toolCallId: call.id, toolName: call.name, isError: true, result: `(the ${kind} session holds no result for this call)`, at })

/**
 * The messages with their last turn ended: an imported conversation goes on nowhere, but a turn that ends in a tool
 * result or a user's message reads, to recall's indexer, as one still running, and it would never be indexed. A
 * short assistant line saying where the import ends closes it.
 */
export const closeLastTurn = (messages: ReadonlyArray<SessionMessage>, kind: ImportKind): ReadonlyArray<SessionMessage> => {
  const last = messages.at(-1)
  if (last === undefined || (last._tag === "assistant" && last.toolCalls.length === 0)) return messages
  return [...messages, new AssistantMessage({ text: `(the imported ${kind} session ends here)`, toolCalls: [], at: last.at })]
}

/** A user message of imported text. */
export const userText = (text: string, at: string) => new UserMessage({ text, at })

/** One JSON line of a source file, by its line number (from 1). */
export interface JsonLine {
  readonly line: number
  readonly value: unknown
}

/** The JSON lines of a file; a line that is not JSON (or nested too deep) is left out and counted in `notes`. */
export const jsonLines = (bytes: Uint8Array, notes: Notes): Array<JsonLine> => {
  const text = Buffer.from(bytes).toString("utf8")
  const out: Array<JsonLine> = []
  let n = 0
  for (const raw of text.split("\n")) {
    n++
    if (raw.trim() === "") continue
    const parsed = parseJsonBounded(raw, { max: maxJsonDepth })
    if (Either.isLeft(parsed)) notes.add(`line that is not JSON (${parsed.left.reason === "syntax" ? "malformed" : "nested too deep"}) skipped`)
    else out.push({ line: n, value: parsed.right })
  }
  return out
}

/** A whole JSON file, or why not. */
export const jsonFile = (bytes: Uint8Array): Either.Either<unknown, string> =>
  Either.mapLeft(parseJsonBounded(Buffer.from(bytes).toString("utf8"), { max: maxJsonDepth }), (error) => error.message)

/** Decodes `value` with `schema`, or undefined (the caller counts it as skipped). */
export const decodeOr = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (value: unknown): A | undefined => Either.getOrUndefined(decode(value))
}

/** The text of a source's content parts of type text (`{ type: "text", text }`); the rest are described by `other`. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
