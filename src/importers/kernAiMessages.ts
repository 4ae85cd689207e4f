/**
 * kern-ai's conversation lines as kern's messages. kern-ai (github.com/oguzbilgic/kern-ai) keeps each session as
 * `.kern/sessions/<uuid>.jsonl`: a first line of metadata (`{ id, createdAt, updatedAt }`), then one AI SDK
 * `ModelMessage` a line (src/session.ts there): `{ role: "user" | "assistant" | "tool" | "system", content }`, content a
 * string or parts (`text`, `image`, `file`, `reasoning`, `tool-call { toolCallId, toolName, input }`, `tool-result
 * { toolCallId, toolName, output: { type, value } }`). A user message starts with its envelope, `[via <interface>,
 * <channel>, user: <id>, time: <iso>]` (docs/architecture.md there), the same contract as kern's, so it becomes the
 * message's envelope and time again. Messages have no time field of their own: the envelope's, else recall.db's
 * (`messages.timestamp`), else the one before.
 */
import { Schema } from "effect"
import { AssistantMessage, Envelope, type SessionMessage, type ToolCall, ToolResultMessage, UserMessage, valueText } from "../session/messages.js"
import {
  capped,
  decodeOr,
  isRecord,
  makeClock,
  maxResultChars,
  maxTextChars,
  type Notes,
  pairCalls,
  paramsOf,
  timeOf
} from "./sessionBuilder.js"

const ModelMessage = Schema.Struct({
  role: Schema.Literal("user", "assistant", "tool", "system"),
  content: Schema.Union(Schema.String, Schema.Array(Schema.Unknown))
})
const decodeMessage = decodeOr(ModelMessage)

/** A line of the source with the time recall.db knows for it, if any. */
export interface KernAiLine {
  readonly value: unknown
  readonly timeMs?: number | undefined
}

const envelopePattern = /^\[via ([^\]\n]*)\]\r?\n?/

/** The envelope at the start of a user's text, and the text after it. */
export const splitEnvelope = (text: string): { readonly envelope?: Envelope; readonly text: string; readonly timeMs?: number } => {
  const match = envelopePattern.exec(text)
  if (match === null) return { text }
  const fields = match[1]!.split(", ")
  const user = fields.find((f) => f.startsWith("user: "))?.slice(6)
  const time = fields.find((f) => f.startsWith("time: "))?.slice(6)
  const rest = fields.filter((f) => !f.startsWith("user: ") && !f.startsWith("time: "))
  const iface = rest[0]
  if (iface === undefined || user === undefined) return { text }
  const timeMs = timeOf(time)
  const envelope = new Envelope({
    interface: iface,
    channel: rest.slice(1).join(", ") || iface,
    userId: user,
    time: time ?? ""
  })
  return { envelope, text: text.slice(match[0].length), ...(timeMs === undefined ? {} : { timeMs }) }
}

const partText = (part: unknown, notes: Notes): string | undefined => {
  if (!isRecord(part)) return undefined
  switch (part["type"]) {
    case "text":
      return typeof part["text"] === "string" ? part["text"] : undefined
    case "image":
      notes.add("image (kept as a line naming it)")
      return `[image${typeof part["mediaType"] === "string" ? `: ${part["mediaType"]}` : ""}]`
    case "file":
      notes.add("file attachment (kept as a line naming it)")
      return `[file: ${typeof part["filename"] === "string" ? part["filename"] : typeof part["mediaType"] === "string" ? part["mediaType"] : "file"}]`
    case "reasoning":
      notes.add("reasoning part (left out: kern keeps no reasoning)")
      return undefined
    default:
      return undefined
  }
}

/** A tool result's output as kern keeps it: text as it is, JSON as JSON; whether it was an error. */
const outputOf = (part: Record<string, unknown>): { readonly result: string; readonly isError: boolean } => {
  const output = part["output"]
  if (isRecord(output) && typeof output["type"] === "string") {
    const type = output["type"]
    const value = output["value"]
    return { result: valueText(value ?? ""), isError: type === "error-text" || type === "error-json" }
  }
  // AI SDK 4's `result`.
  const result = part["result"] ?? output ?? ""
  return { result: valueText(result), isError: part["isError"] === true }
}

/** kern-ai's messages (in file order) as kern's, with the notes of what was kept as text or left out. */
export const convertKernAi = (lines: ReadonlyArray<KernAiLine>, createdAtMs: number, notes: Notes): Array<SessionMessage> => {
  const clock = makeClock(createdAtMs)
  const out: Array<SessionMessage> = []
  const cut = () => notes.add("message cut to the import's size cap")
  for (const line of lines) {
    const message = decodeMessage(line.value)
    if (message === undefined) {
      notes.add("line that is not a message (kept as text)")
      out.push(new AssistantMessage({ text: `[unreadable kern-ai line] ${capped(valueText(line.value), maxTextChars, cut)}`, toolCalls: [], at: clock.at(line.timeMs) }))
      continue
    }
    const parts = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content
    if (message.role === "tool") {
      for (const part of parts) {
        if (!isRecord(part) || part["type"] !== "tool-result") {
          notes.add("tool message part that is not a result (left out)")
          continue
        }
        const { isError, result } = outputOf(part)
        out.push(new ToolResultMessage({
          toolCallId: String(part["toolCallId"] ?? ""),
          toolName: String(part["toolName"] ?? "tool"),
          isError,
          result: capped(result, maxResultChars, cut),
          at: clock.at(line.timeMs)
        }))
      }
      continue
    }
    const texts: Array<string> = []
    const calls: Array<ToolCall> = []
    for (const part of parts) {
      if (isRecord(part) && part["type"] === "tool-call") {
        calls.push({ id: String(part["toolCallId"] ?? `call-${calls.length}`), name: String(part["toolName"] ?? "tool"), params: paramsOf(part["input"] ?? part["args"]) })
        continue
      }
      const text = partText(part, notes)
      if (text !== undefined) texts.push(text)
      else if (!isRecord(part) || part["type"] !== "reasoning") {
        notes.add("content part of an unknown type (kept as text)")
        texts.push(`[${isRecord(part) && typeof part["type"] === "string" ? part["type"] : "part"}] ${valueText(part)}`)
      }
    }
    const text = capped(texts.join("\n"), maxTextChars, cut)
    if (message.role === "user") {
      const split = splitEnvelope(text)
      const at = clock.at(split.timeMs ?? line.timeMs)
      out.push(new UserMessage({ text: split.text, ...(split.envelope === undefined ? {} : { envelope: split.envelope }), at }))
    } else if (message.role === "system") {
      notes.add("system message (kept as the user's text)")
      out.push(new UserMessage({ text: `[system] ${text}`, at: clock.at(line.timeMs) }))
    } else {
      out.push(new AssistantMessage({ text, toolCalls: calls, at: clock.at(line.timeMs) }))
    }
  }
  return pairCalls(out, "kern-ai", notes)
}
