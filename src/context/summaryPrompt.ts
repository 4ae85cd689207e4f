import { type SessionMessage, valueText } from "../session/messages.js"
import { artifactReference } from "./sentText.js"
import type { Segment } from "./Segment.js"

/** What a summary is asked for: a segment's messages (level 0) or its children's summaries (level ≥ 1). */
export interface SummarizeRequest {
  /** 0: summarize messages; ≥ 1: summarize child summaries. */
  readonly level: number
  /** The message range, `start` inclusive, `end` exclusive (for the prompt's framing). */
  readonly start: number
  readonly end: number
  /** Level 0: the segment's messages. */
  readonly messages?: ReadonlyArray<SessionMessage> | undefined
  /** Level ≥ 1: the children, in order, each with its summary. */
  readonly children?: ReadonlyArray<Segment> | undefined
  /** summaryTargetTokens(tokens) from Segment.ts. */
  readonly targetTokens: number
}

/** A tool result is cut to this many characters: the summary needs what the tool found, not all its output. */
export const toolResultChars = 3_000
/** A tool call's arguments (a whole file being written) are cut to this many. */
export const toolArgsChars = 1_500
/** A message longer than this (characters or UTF-8 bytes: ~8,000 tokens) is sent as its head and tail only. */
export const hugeMessageChars = 32_000
const hugeHeadChars = 8_000
const hugeTailChars = 4_000

/**
 * `text` whole when it fits `head + tail`, else its head and tail with a line saying how much was left out and, when
 * the text names an artifact the compactor stored, how to get the whole of it: a summary can point there.
 */
export const clip = (text: string, head: number, tail: number): string => {
  if (text.length <= head + tail) return text
  const omitted = text.length - head - tail
  const artifact = artifactReference.exec(text)?.[1]
  const whole = artifact === undefined ? "" : `; the whole text is artifact ${artifact}: retrieve_tool_output({ "artifactId": "${artifact}" })`
  return `${text.slice(0, head)}\n[… ${omitted} characters left out${whole} …]\n${text.slice(text.length - tail)}`
}

const isHuge = (text: string) => text.length > hugeMessageChars || Buffer.byteLength(text, "utf8") > hugeMessageChars

const speaker = (message: SessionMessage): string => {
  switch (message._tag) {
    case "user":
      return message.envelope === undefined ? "user" : `user (${message.envelope.userId} via ${message.envelope.interface})`
    case "assistant":
      return "assistant"
    case "tool":
      return `tool ${message.toolName}${message.isError ? " (failed)" : ""}`
    case "turn-failed":
      return "kern"
  }
}

const body = (message: SessionMessage): string => {
  switch (message._tag) {
    case "user":
      return message.text
    case "assistant": {
      const calls = message.toolCalls.map((call) =>
        `→ ${call.name} ${clip(valueText(call.params), toolArgsChars - 500, 500)}`)
      return [message.text, ...calls].filter((part) => part !== "").join("\n")
    }
    case "tool":
      return clip(valueText(message.result), toolResultChars - 1_000, 1_000)
    case "turn-failed":
      return `the turn ended without an answer: ${message.message}`
  }
}

/** One message as the summary model reads it: `role: text`, tool calls as `→ name {args}`, never a huge text whole. */
export const renderMessage = (message: SessionMessage): string => {
  const text = body(message)
  return `${speaker(message)}: ${isHuge(text) ? clip(text, hugeHeadChars, hugeTailChars) : text}`
}

/** Messages `start`–`end - 1` as the prompt names them. */
export const rangeLabel = (start: number, end: number): string => end - start === 1 ? `${start}` : `${start}–${end - 1}`

/** Why a request cannot be summarized, if it cannot (nothing to summarize, a child without its summary). */
export const requestProblem = (request: SummarizeRequest): string | undefined => {
  if (request.level === 0) {
    return request.messages === undefined || request.messages.length === 0
      ? `messages ${rangeLabel(request.start, request.end)}: a level 0 summary needs the segment's messages`
      : undefined
  }
  const children = request.children ?? []
  if (children.length === 0) {
    return `messages ${rangeLabel(request.start, request.end)}: a level ${request.level} summary needs its children`
  }
  const bare = children.filter((child) => child.summary === null || child.summary.trim() === "")
  return bare.length === 0
    ? undefined
    : `messages ${rangeLabel(request.start, request.end)}: child segment${bare.length === 1 ? "" : "s"} ` +
      `${bare.map((child) => child.id).join(", ")} ${bare.length === 1 ? "has" : "have"} no summary yet`
}

const lengthAsked = (targetTokens: number) =>
  `about ${targetTokens} tokens (some ${Math.round(targetTokens * 0.75)} words)`

const keep = "Keep what a reader needs months later: decisions and their reasons, facts learned, names of people, " +
  "files, projects and tools, exact numbers, dates, identifiers and paths, what the tools did and what they found, " +
  "and open questions and unfinished work. Keep the order of events. Write nothing that is not in the text."

const messagesPrompt = (request: SummarizeRequest, messages: ReadonlyArray<SessionMessage>): string => {
  const range = rangeLabel(request.start, request.end)
  const first = messages[0]!.at
  const last = messages[messages.length - 1]!.at
  return [
    `Summarize messages ${range} of a long conversation between an AI agent and its users, faithfully, in ` +
    `${lengthAsked(request.targetTokens)}. ${keep} Answer with the summary only.`,
    `<conversation messages="${range}" from="${first}" to="${last}">\n${messages.map(renderMessage).join("\n\n")}\n</conversation>`
  ].join("\n\n")
}

const childrenPrompt = (request: SummarizeRequest, children: ReadonlyArray<Segment>): string => {
  const range = rangeLabel(request.start, request.end)
  const blocks = children.map((child) =>
    `<summary level="${child.level}" messages="${rangeLabel(child.start, child.end)}" from="${child.firstAt}" ` +
    `to="${child.lastAt}">\n${(child.summary ?? "").trim()}\n</summary>`)
  return [
    `These ${children.length} summaries cover messages ${range} of a long conversation between an AI agent and its ` +
    `users, in order. Merge them, in that order, into one faithful summary of ${lengthAsked(request.targetTokens)}. ` +
    `${keep} An open item a later summary resolves is told as resolved. Answer with the summary only.`,
    blocks.join("\n\n")
  ].join("\n\n")
}

/** The prompt for a request that `requestProblem` accepted. */
export const summaryPrompt = (request: SummarizeRequest): string =>
  request.level === 0 ? messagesPrompt(request, request.messages ?? []) : childrenPrompt(request, request.children ?? [])
