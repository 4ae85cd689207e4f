// Session messages from `GET /history` as chat items: pure, like chatState.ts, so its grouping is unit-tested.
import { decodeFile, decodeFiles, type FileView } from "./attachments.js"
import type { ChatState, Item, Part, ToolResult } from "./chatState.js"
import { arr, isObject, type Json, obj, parseJson, str } from "./wire.js"

export interface HistoryPage {
  readonly items: ReadonlyArray<Item>
  /** Pass as `before` to get the page older than this one; undefined when this page reaches the start. */
  readonly before?: string | undefined
}

const resultText = (u: Json | undefined): string =>
  typeof u === "string"
    ? u
    : isObject(u) && typeof u["text"] === "string"
    ? u["text"]
    : u === undefined
    ? ""
    : JSON.stringify(u, null, 2)

/** The file a tool call sent (the message tool's `{ sent, to, file }`), as the session recorded its result: JSON text. */
const sentFileOf = (u: Json | undefined): FileView | undefined => {
  const result = typeof u === "string" ? parseJson(u) : u
  return isObject(result) ? decodeFile(result["file"]) : undefined
}

/** Session messages (oldest first) to chat items: an assistant message and its tool results group under one turn. */
export const itemsFromMessages = (messages: ReadonlyArray<Json>, keyPrefix: string): ReadonlyArray<Item> => {
  const items: Array<Item> = []
  messages.forEach((m, index) => {
    if (!isObject(m)) return
    const tag = str(m, "_tag")
    const at = str(m, "at") ?? ""
    const key = `${keyPrefix}:${index}`
    const last = items[items.length - 1]
    if (tag === "user") {
      const envelope = obj(m, "envelope")
      items.push({
        kind: "user",
        key,
        text: str(m, "text") ?? "",
        interface: (envelope && str(envelope, "interface")) ?? "web",
        channel: envelope && str(envelope, "channel"),
        userId: envelope && str(envelope, "userId"),
        ...(arr(m, "attachments").length === 0 ? {} : { files: decodeFiles(arr(m, "attachments")) }),
        at
      })
    } else if (tag === "assistant") {
      const parts: Array<Part> = []
      const text = str(m, "text") ?? ""
      if (text.length > 0) parts.push({ kind: "text", text })
      for (const call of arr(m, "toolCalls")) {
        if (!isObject(call)) continue
        parts.push({ kind: "tool", id: str(call, "id") ?? "", name: str(call, "name") ?? "tool", params: call["params"] ?? null })
      }
      if (last?.kind === "assistant") {
        items[items.length - 1] = { ...last, parts: [...last.parts, ...parts] }
      } else {
        items.push({ kind: "assistant", key, parts, status: "done", at })
      }
    } else if (tag === "tool") {
      const id = str(m, "toolCallId") ?? ""
      const sentFile = sentFileOf(m["result"])
      const result: ToolResult = {
        text: resultText(m["result"]),
        isError: m["isError"] === true,
        ...(sentFile === undefined ? {} : { file: sentFile })
      }
      if (last?.kind === "assistant" && last.parts.some((p) => p.kind === "tool" && p.id === id)) {
        items[items.length - 1] = {
          ...last,
          parts: last.parts.map((p) => p.kind === "tool" && p.id === id ? { ...p, result } : p)
        }
      } else {
        items.push({
          kind: "assistant",
          key,
          parts: [{ kind: "tool", id, name: str(m, "toolName") ?? "tool", params: null, result }],
          status: "done",
          at
        })
      }
    } else if (tag === "turn-failed") {
      // The turn's failure, recorded: shown where the live error event showed it, under what the turn said.
      const error: Part = { kind: "error", message: str(m, "message") ?? "", failure: str(m, "failure") }
      if (last?.kind === "assistant") {
        items[items.length - 1] = { ...last, parts: [...last.parts, error], status: "failed" }
      } else {
        items.push({ kind: "assistant", key, parts: [error], status: "failed", at })
      }
    }
  })
  return items
}

/** `GET /history` answers `{ sessionId, messages: [{ index, message }], total, nextBefore }`. */
export const decodeHistory = (u: Json | undefined, keyPrefix: string): HistoryPage | undefined => {
  if (!isObject(u)) return undefined
  const entries = arr(u, "messages").filter(isObject)
  const messages = entries.map((entry) => entry["message"] ?? null)
  const first = entries[0]
  const prefix = `${keyPrefix}:${(first && typeof first["index"] === "number") ? first["index"] : 0}`
  const next = u["nextBefore"]
  return { items: itemsFromMessages(messages, prefix), before: typeof next === "number" ? String(next) : undefined }
}

/** Puts an older page above the items on screen, joining a turn that the page boundary split. */
export const prependPage = (state: ChatState, page: ReadonlyArray<Item>): ChatState => {
  const older = page.slice()
  const first = state.items[0]
  const tail = older[older.length - 1]
  if (first?.kind === "assistant" && first.turnId === undefined && tail?.kind === "assistant") {
    older[older.length - 1] = { ...tail, parts: [...tail.parts, ...first.parts] }
    return { ...state, items: [...older, ...state.items.slice(1)] }
  }
  return { ...state, items: [...older, ...state.items] }
}
