/**
 * An opencode session export as kern's messages. `opencode export <sessionID>` (packages/opencode/src/cli/cmd/export.ts
 * in github.com/sst/opencode) prints `{ info, messages: [{ info, parts }], todos }`: `info` the session (`id`, `title`,
 * `time: { created, updated }`), each message's `info` its `role` (`user` | `assistant`) and `time.created` (epoch ms),
 * and its parts (packages/opencode/src/session/message-v2.ts): `text`, `reasoning`, `file { mime, filename, url }`,
 * `tool { callID, tool, state: { status, input, output | error } }`, `agent`, `subtask`, and the bookkeeping parts
 * `step-start`, `step-finish`, `snapshot`, `patch`, `retry`, `compaction`. An assistant message's parts run step by
 * step: text, then the step's tool calls; each run becomes one kern assistant message followed by its results.
 */
import { Schema } from "effect"
import { AssistantMessage, type SessionMessage, type ToolCall, ToolResultMessage, UserMessage, valueText } from "../session/messages.js"
import { capped, decodeOr, isRecord, makeClock, maxResultChars, maxTextChars, type Notes, pairCalls, paramsOf, timeOf } from "./sessionBuilder.js"

export const OpencodeExport = Schema.Struct({
  info: Schema.Struct({
    id: Schema.String,
    title: Schema.optional(Schema.String),
    time: Schema.optional(Schema.Struct({ created: Schema.optional(Schema.Unknown) }))
  }),
  messages: Schema.Array(Schema.Unknown)
})
export type OpencodeExport = typeof OpencodeExport.Type

const Message = Schema.Struct({
  info: Schema.Struct({
    role: Schema.String,
    time: Schema.optional(Schema.Struct({ created: Schema.optional(Schema.Unknown) })),
    error: Schema.optional(Schema.Unknown)
  }),
  parts: Schema.Array(Schema.Unknown)
})
const decodeMessage = decodeOr(Message)

const bookkeeping = new Set(["step-start", "step-finish", "snapshot", "patch", "retry", "compaction"])

/** The messages of an export, as kern's. */
export const convertOpencode = (exported: OpencodeExport, createdAtMs: number, notes: Notes): Array<SessionMessage> => {
  const clock = makeClock(createdAtMs)
  const out: Array<SessionMessage> = []
  const cut = () => notes.add("message cut to the import's size cap")
  for (const raw of exported.messages) {
    const message = decodeMessage(raw)
    if (message === undefined) {
      notes.add("message that is not one (left out)")
      continue
    }
    const at = clock.at(timeOf(message.info.time?.created))
    const texts: Array<string> = []
    const calls: Array<ToolCall> = []
    const results: Array<ToolResultMessage> = []
    const flush = () => {
      if (texts.length === 0 && calls.length === 0) return
      const text = capped(texts.join("\n"), maxTextChars, cut)
      if (message.info.role === "user") out.push(new UserMessage({ text, at }))
      else out.push(new AssistantMessage({ text, toolCalls: [...calls], at }), ...results)
      texts.length = 0
      calls.length = 0
      results.length = 0
    }
    for (const part of message.parts) {
      if (!isRecord(part)) continue
      const type = String(part["type"])
      if (bookkeeping.has(type)) {
        notes.add(`${type} part (bookkeeping, not conversation)`)
        continue
      }
      // A step's text after its tool calls starts the next kern message.
      if (type !== "tool" && calls.length > 0) flush()
      switch (type) {
        case "text":
          if (typeof part["text"] === "string") texts.push(part["text"])
          break
        case "reasoning":
          notes.add("reasoning part (left out: kern keeps no reasoning)")
          break
        case "file":
          notes.add("file part (kept as a line naming it)")
          texts.push(`[file: ${String(part["filename"] ?? part["url"] ?? "file")}${typeof part["mime"] === "string" ? ` (${part["mime"]})` : ""}]`)
          break
        case "agent":
          texts.push(`@${String(part["name"] ?? "agent")}`)
          break
        case "subtask":
          notes.add("subtask part (kept as text)")
          texts.push(`[subtask for ${String(part["agent"] ?? "an agent")}: ${String(part["description"] ?? "")}]\n${String(part["prompt"] ?? "")}`)
          break
        case "tool": {
          if (message.info.role === "user") {
            notes.add("tool part in a user message (kept as text)")
            texts.push(`[tool ${String(part["tool"])}] ${valueText(part["state"])}`)
            break
          }
          const state = isRecord(part["state"]) ? part["state"] : {}
          const call = { id: String(part["callID"] ?? `call-${calls.length}`), name: String(part["tool"] ?? "tool"), params: paramsOf(state["input"]) }
          calls.push(call)
          const status = String(state["status"] ?? "")
          const result = status === "completed"
            ? valueText(state["output"] ?? "")
            : status === "error"
            ? valueText(state["error"] ?? "error")
            : `(the call was ${status || "unfinished"} when the opencode session was exported)`
          results.push(new ToolResultMessage({
            toolCallId: call.id,
            toolName: call.name,
            isError: status !== "completed",
            result: capped(result, maxResultChars, cut),
            at: clock.at(timeOf(isRecord(state["time"]) ? state["time"]["end"] : undefined))
          }))
          break
        }
        default:
          notes.add(`${type} part of a type kern does not know (kept as text)`)
          texts.push(`[${type}] ${valueText(part)}`)
      }
    }
    if (message.info.error !== undefined && message.info.role === "assistant") {
      notes.add("assistant error (kept as text)")
      texts.push(`[error: ${isRecord(message.info.error) ? valueText(message.info.error["data"] ?? message.info.error["name"] ?? message.info.error) : valueText(message.info.error)}]`)
    }
    flush()
  }
  return pairCalls(out, "opencode", notes)
}
