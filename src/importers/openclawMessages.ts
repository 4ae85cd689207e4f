/**
 * An OpenClaw session transcript as kern's messages. OpenClaw keeps each session as
 * `~/.openclaw/agents/<agentId>/sessions/<sessionId>.jsonl` (docs/reference/session-management-compaction.md in
 * github.com/openclaw/openclaw), written by pi-coding-agent's SessionManager (packages/coding-agent/docs/session.md in
 * github.com/badlogic/pi-mono): a header `{ type: "session", version, id, timestamp, cwd }`, then entries with `id`,
 * `parentId` and an ISO `timestamp`. `message` entries carry `message: { role, content, timestamp }` with role `user`
 * (content a string or `text`/`image` parts), `assistant` (`text`, `thinking`, `toolCall { id, name, arguments }`
 * parts), `toolResult` (`toolCallId`, `toolName`, `content`, `isError`), `bashExecution` (`command`, `output`,
 * `exitCode`), `custom`, `branchSummary`, `compactionSummary`. `compaction`, `branch_summary` and `custom_message`
 * entries hold summaries and injected text; `model_change`, `thinking_level_change`, `custom`, `label` and
 * `session_info` are bookkeeping. Entries are taken in file order (every branch of the tree).
 */
import { Schema } from "effect"
import { AssistantMessage, type SessionMessage, type ToolCall, ToolResultMessage, UserMessage, valueText } from "../session/messages.js"
import type { JsonLine } from "./sessionBuilder.js"
import { capped, decodeOr, isRecord, makeClock, maxResultChars, maxTextChars, type Notes, pairCalls, paramsOf, timeOf } from "./sessionBuilder.js"

const Entry = Schema.Struct({ type: Schema.String, timestamp: Schema.optional(Schema.Unknown) })
const decodeEntry = decodeOr(Entry)

const Message = Schema.Struct({
  role: Schema.String,
  content: Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.Unknown))),
  timestamp: Schema.optional(Schema.Unknown)
})
const decodeMessage = decodeOr(Message)

const bookkeeping = new Set(["model_change", "thinking_level_change", "custom", "label", "session_info"])

/** Text of a content string or parts: text kept, images named, thinking left out (counted). */
const textOf = (content: string | ReadonlyArray<unknown> | undefined, notes: Notes, calls?: Array<ToolCall>): string => {
  if (content === undefined) return ""
  if (typeof content === "string") return content
  const texts: Array<string> = []
  for (const part of content) {
    if (!isRecord(part)) continue
    switch (part["type"]) {
      case "text":
        if (typeof part["text"] === "string") texts.push(part["text"])
        break
      case "image":
        notes.add("image (kept as a line naming it)")
        texts.push(`[image${typeof part["mimeType"] === "string" ? `: ${part["mimeType"]}` : ""}]`)
        break
      case "thinking":
        notes.add("thinking part (left out: kern keeps no reasoning)")
        break
      case "toolCall":
        if (calls !== undefined) {
          calls.push({ id: String(part["id"] ?? `call-${calls.length}`), name: String(part["name"] ?? "tool"), params: paramsOf(part["arguments"]) })
          break
        }
        texts.push(`[tool call] ${valueText(part)}`)
        break
      default:
        notes.add("content part of an unknown type (kept as text)")
        texts.push(`[${String(part["type"])}] ${valueText(part)}`)
    }
  }
  return texts.join("\n")
}

/** An OpenClaw transcript's entries after its header, as kern's messages. */
export const convertOpenclaw = (entries: ReadonlyArray<JsonLine>, createdAtMs: number, notes: Notes): Array<SessionMessage> => {
  const clock = makeClock(createdAtMs)
  const out: Array<SessionMessage> = []
  const cut = () => notes.add("message cut to the import's size cap")
  const text = (t: string) => capped(t, maxTextChars, cut)
  const assistantText = (t: string, at: string) => out.push(new AssistantMessage({ text: text(t), toolCalls: [], at }))
  for (const { value } of entries) {
    const entry = decodeEntry(value)
    if (entry === undefined || !isRecord(value)) {
      notes.add("line that is not a transcript entry (left out)")
      continue
    }
    const entryMs = timeOf(entry.timestamp)
    if (bookkeeping.has(entry.type)) {
      notes.add(`${entry.type} entry (bookkeeping, not conversation)`)
      continue
    }
    if (entry.type === "compaction" || entry.type === "branch_summary") {
      notes.add(`${entry.type} summary (kept as the assistant's text)`)
      assistantText(`[${entry.type === "compaction" ? "compaction" : "branch"} summary] ${valueText(value["summary"] ?? "")}`, clock.at(entryMs))
      continue
    }
    if (entry.type === "custom_message") {
      notes.add("custom_message entry (kept as the user's text)")
      const content = value["content"]
      out.push(new UserMessage({
        text: text(`[${String(value["customType"] ?? "custom")}] ${typeof content === "string" ? content : Array.isArray(content) ? textOf(content, notes) : ""}`),
        at: clock.at(entryMs)
      }))
      continue
    }
    if (entry.type !== "message") {
      notes.add(`${entry.type} entry of a type kern does not know (kept as text)`)
      assistantText(`[${entry.type}] ${valueText(value)}`, clock.at(entryMs))
      continue
    }
    const message = decodeMessage(value["message"])
    if (message === undefined) {
      notes.add("message entry without a message (left out)")
      continue
    }
    const raw = value["message"] as Record<string, unknown>
    const at = clock.at(timeOf(message.timestamp) ?? entryMs)
    switch (message.role) {
      case "user":
        out.push(new UserMessage({ text: text(textOf(message.content, notes)), at }))
        break
      case "assistant": {
        const calls: Array<ToolCall> = []
        const said = textOf(message.content, notes, calls)
        const failure = typeof raw["errorMessage"] === "string" ? `\n[error: ${raw["errorMessage"]}]` : ""
        out.push(new AssistantMessage({ text: text(said + failure), toolCalls: calls, at }))
        break
      }
      case "toolResult":
        out.push(new ToolResultMessage({
          toolCallId: String(raw["toolCallId"] ?? ""),
          toolName: String(raw["toolName"] ?? "tool"),
          isError: raw["isError"] === true,
          result: capped(textOf(message.content, notes), maxResultChars, cut),
          at
        }))
        break
      case "bashExecution": {
        notes.add("bash execution (kept as a bash call and its result)")
        const id = `bash-${String(value["id"] ?? out.length)}`
        out.push(new AssistantMessage({ text: "", toolCalls: [{ id, name: "bash", params: { command: String(raw["command"] ?? "") } }], at }))
        const exit = typeof raw["exitCode"] === "number" ? raw["exitCode"] : undefined
        out.push(new ToolResultMessage({
          toolCallId: id,
          toolName: "bash",
          isError: exit !== undefined && exit !== 0,
          result: capped(`${String(raw["output"] ?? "")}${exit === undefined ? "" : `\n[exit code ${exit}]`}`, maxResultChars, cut),
          at
        }))
        break
      }
      case "branchSummary":
      case "compactionSummary":
        notes.add(`${message.role} message (kept as the assistant's text)`)
        assistantText(`[${message.role === "branchSummary" ? "branch" : "compaction"} summary] ${String(raw["summary"] ?? "")}`, at)
        break
      case "custom":
        notes.add("custom message (kept as the user's text)")
        out.push(new UserMessage({ text: text(`[${String(raw["customType"] ?? "custom")}] ${textOf(message.content, notes)}`), at }))
        break
      default:
        notes.add(`message of role ${message.role} (kept as text)`)
        assistantText(`[${message.role}] ${textOf(message.content, notes)}`, at)
    }
  }
  return pairCalls(out, "openclaw", notes)
}
