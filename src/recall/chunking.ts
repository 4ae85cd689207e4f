import { type TokenCounter, tokensUpTo } from "../model/tokenizer.js"
import { type SessionMessage, valueText } from "../session/messages.js"
import type { IndexedMessage, NewChunk } from "./RecallStore.js"

/** A chunk holds at most this many tokens (o200k_base). */
export const maxChunkTokens = 2_000
/** A tool result contributes at most this many characters to a chunk (the message itself is kept whole). */
export const maxToolChars = 2_000

/**
 * A user message's text with what kern read out of its files (a PDF's text, a voice note's transcript, a text file),
 * each under its name, so recall finds a message by a word only its attachment holds.
 */
const userText = (message: Extract<SessionMessage, { readonly _tag: "user" }>): string => {
  const files = (message.attachments ?? []).map((file) =>
    file.text === undefined ? `[file: ${file.name}]` : `[file: ${file.name}]\n${file.text}`
  )
  return [message.text, ...files].filter((part) => part !== "").join("\n\n")
}

/** A session message as the index stores it: its whole text, tool calls named with their arguments. */
export const indexedMessage = (message: SessionMessage, index: number): IndexedMessage => {
  const atMs = Date.parse(message.at)
  const at = Number.isNaN(atMs) ? 0 : atMs
  switch (message._tag) {
    case "user":
      return { index, role: "user", atMs: at, toolCalls: 0, text: userText(message) }
    case "assistant": {
      const calls = message.toolCalls.map((call) => `→ ${call.name} ${valueText(call.params)}`)
      return {
        index,
        role: "assistant",
        atMs: at,
        toolCalls: message.toolCalls.length,
        text: [message.text, ...calls].filter((part) => part !== "").join("\n")
      }
    }
    case "tool":
      return {
        index,
        role: `tool ${message.toolName}${message.isError ? " (error)" : ""}`,
        atMs: at,
        toolCalls: 0,
        text: valueText(message.result)
      }
    case "turn-failed":
      return { index, role: "kern", atMs: at, toolCalls: 0, text: `the turn ended without an answer: ${message.message}` }
  }
}

const isUser = (message: IndexedMessage) => message.role === "user"
const isTool = (message: IndexedMessage) => message.role.startsWith("tool")

/** One message as a chunk shows it: tool output cut to maxToolChars, with what was left out said. */
const chunkLine = (message: IndexedMessage): string => {
  const text = isTool(message) && message.text.length > maxToolChars
    ? `${message.text.slice(0, maxToolChars)}… [${message.text.length - maxToolChars} more characters]`
    : message.text
  return `${message.role}: ${text}`
}

/** Cuts a text that alone exceeds the limit into pieces that fit, at line breaks where it can. */
const splitText = (text: string, limit: number, count: TokenCounter): Array<string> => {
  if (tokensUpTo(text, limit, count) <= limit) return [text]
  const half = Math.floor(text.length / 2)
  const cut = text.lastIndexOf("\n", half) > half / 2 ? text.lastIndexOf("\n", half) + 1 : half
  return [...splitText(text.slice(0, cut), limit, count), ...splitText(text.slice(cut), limit, count)]
}

interface Piece {
  readonly start: number
  readonly end: number
  readonly startMs: number
  readonly endMs: number
  readonly text: string
}

/** Packs lines (with their message index and time) into pieces of at most maxChunkTokens, at line boundaries. */
const pack = (
  lines: ReadonlyArray<{ readonly index: number; readonly atMs: number; readonly text: string }>,
  count: TokenCounter,
  limit = maxChunkTokens
): Array<Piece> => {
  const pieces: Array<Piece> = []
  let current: Array<typeof lines[number]> = []
  let tokens = 0
  const flush = () => {
    if (current.length === 0) return
    const first = current[0]!
    const last = current[current.length - 1]!
    pieces.push({ start: first.index, end: last.index, startMs: first.atMs, endMs: last.atMs, text: current.map((l) => l.text).join("\n") })
    current = []
    tokens = 0
  }
  for (const line of lines) {
    const lineTokens = tokensUpTo(line.text, limit, count) + 1
    if (lineTokens > limit) {
      flush()
      for (const part of splitText(line.text, limit - 1, count)) {
        pieces.push({ start: line.index, end: line.index, startMs: line.atMs, endMs: line.atMs, text: part })
      }
      continue
    }
    if (tokens + lineTokens > limit) flush()
    current.push(line)
    tokens += lineTokens
  }
  flush()
  return pieces
}

/**
 * The finished turns among a session's messages not yet chunked (`pending`, in order, starting at a turn's first
 * message), as chunks, and the index of the first message left for later. A turn runs from a user message to the
 * next; it is finished once the next one began or its last message is an answer without tool calls, so a turn that
 * straddles two indexing passes is chunked once, whole.
 */
export const chunkTurns = (
  sessionId: string,
  pending: ReadonlyArray<IndexedMessage>,
  count: TokenCounter,
  /** More messages follow this page: its last turn goes on past it, unless it is the page's only turn (then cut here). */
  morePages = false
): { readonly chunks: ReadonlyArray<NewChunk>; readonly chunkedUntil: number | undefined } => {
  const turns: Array<Array<IndexedMessage>> = []
  for (const message of pending) {
    if (isUser(message) || turns.length === 0) turns.push([message])
    else turns[turns.length - 1]!.push(message)
  }
  const last = turns.at(-1)
  const lastDone = morePages
    ? turns.length === 1
    : last !== undefined && last.length > 1 && last[last.length - 1]!.role === "assistant" &&
      last[last.length - 1]!.toolCalls === 0
  const done = lastDone ? turns : turns.slice(0, -1)
  const chunks = done.flatMap((turn) =>
    pack(turn.map((message) => ({ index: message.index, atMs: message.atMs, text: chunkLine(message) })), count).map((piece): NewChunk => ({
      source: "session",
      sessionId,
      path: null,
      messageStart: piece.start,
      messageEnd: piece.end,
      startMs: piece.startMs,
      endMs: piece.endMs,
      text: piece.text
    }))
  )
  const next = lastDone ? undefined : last?.[0]?.index
  const doneEnd = done.at(-1)?.at(-1)?.index
  return { chunks, chunkedUntil: next ?? (doneEnd === undefined ? undefined : doneEnd + 1) }
}

/** A knowledge or notes file as chunks of paragraphs (blank-line separated), numbered from 0. */
export const chunkFile = (path: string, text: string, mtimeMs: number, count: TokenCounter): ReadonlyArray<NewChunk> => {
  const paragraphs = text.split(/\n\s*\n/).map((p) => p.trim()).filter((p) => p !== "")
  // The path heads each chunk: room is kept for it.
  return pack(paragraphs.map((p, index) => ({ index, atMs: mtimeMs, text: p })), count, maxChunkTokens - 100).map((piece) => ({
    source: "file",
    sessionId: null,
    path,
    messageStart: piece.start,
    messageEnd: piece.end,
    startMs: mtimeMs,
    endMs: mtimeMs,
    text: `${path}\n${piece.text}`
  }))
}
