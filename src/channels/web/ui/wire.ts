// The server's JSON as the browser sees it. The UI ships without Effect (its Schema would triple the bundle), so these
// narrow guards decode at the boundary instead, typed by api.ts's Schemas so that a change of the wire breaks the
// build: a frame that does not match is dropped, never trusted by a cast.

import type { AgentEvent, AgentEventType } from "../api.js"
import type { Usage } from "../../../session/messages.js"

export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
export type JsonObject = { readonly [key: string]: Json }

export const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)
export const str = (o: JsonObject, key: string): string | undefined => {
  const v = o[key]
  return typeof v === "string" ? v : undefined
}
export const num = (o: JsonObject, key: string): number | undefined => {
  const v = o[key]
  return typeof v === "number" && Number.isFinite(v) ? v : undefined
}
export const bool = (o: JsonObject, key: string): boolean | undefined => {
  const v = o[key]
  return typeof v === "boolean" ? v : undefined
}
export const arr = (o: JsonObject, key: string): ReadonlyArray<Json> => {
  const v = o[key]
  return Array.isArray(v) ? v : []
}
export const obj = (o: JsonObject, key: string): JsonObject | undefined => {
  const v = o[key]
  return isObject(v) ? v : undefined
}

export const parseJson = (text: string): Json | undefined => {
  try {
    return JSON.parse(text) as Json
  } catch {
    return undefined
  }
}

/** The events of `GET /events`, as api.ts's Schemas describe them (types only: nothing of Effect is bundled). */
export type ServerEvent = AgentEvent

export const eventTypes: ReadonlyArray<AgentEventType> = [
  "incoming",
  "thinking",
  "text-delta",
  "tool-call",
  "tool-result",
  "recall",
  "finish",
  "error",
  "outgoing",
  "heartbeat",
  "reset"
]

const usageOf = (o: JsonObject | undefined): Usage => ({
  inputTokens: (o && num(o, "inputTokens")) ?? 0,
  outputTokens: (o && num(o, "outputTokens")) ?? 0,
  cachedInputTokens: (o && num(o, "cachedInputTokens")) ?? 0,
  costUsdCents: (o && num(o, "costUsdCents")) ?? 0
})

const heartbeatOutcomes = ["sent", "skipped", "ran", "failed"] as const
const outcomeOf = (s: string | undefined) => heartbeatOutcomes.find((o) => o === s)

/** Decodes one SSE frame's data; undefined when it is not a kern event (a required field missing or mistyped). */
export const decodeEvent = (data: string): ServerEvent | undefined => {
  const u = parseJson(data)
  if (!isObject(u)) return undefined
  const seq = num(u, "seq")
  const type = str(u, "type")
  const at = str(u, "at")
  if (seq === undefined || type === undefined || at === undefined) return undefined
  const turnId = str(u, "turnId")
  const id = str(u, "id")
  const name = str(u, "name")
  const text = str(u, "text")
  const iface = str(u, "interface")
  const channel = str(u, "channel")
  switch (type) {
    case "incoming": {
      const messageId = str(u, "messageId") ?? turnId
      const userId = str(u, "userId")
      if (turnId === undefined || text === undefined || iface === undefined || messageId === undefined) return undefined
      return {
        type,
        seq,
        at,
        turnId,
        messageId,
        text,
        interface: iface,
        ...(channel === undefined ? {} : { channel }),
        ...(userId === undefined ? {} : { userId })
      }
    }
    case "thinking":
      return turnId === undefined ? undefined : { type, seq, at, turnId, step: num(u, "step") ?? 0 }
    case "text-delta": {
      const delta = str(u, "delta")
      return turnId === undefined || delta === undefined ? undefined : { type, seq, at, turnId, delta }
    }
    case "tool-call":
      if (turnId === undefined || id === undefined || name === undefined) return undefined
      return { type, seq, at, turnId, id, name, params: u["params"] ?? null }
    case "tool-result":
      if (turnId === undefined || id === undefined || name === undefined || text === undefined) return undefined
      return { type, seq, at, turnId, id, name, isError: bool(u, "isError") ?? false, text, durationMs: num(u, "durationMs") ?? 0 }
    case "recall":
      if (turnId === undefined) return undefined
      return { type, seq, at, turnId, query: str(u, "query") ?? "", hits: num(u, "hits") ?? 0, tokens: num(u, "tokens") ?? 0 }
    case "finish":
      if (turnId === undefined) return undefined
      return {
        type,
        seq,
        at,
        turnId,
        reply: str(u, "reply") ?? "",
        steps: num(u, "steps") ?? 0,
        usage: usageOf(obj(u, "usage")),
        delivered: bool(u, "delivered") ?? true
      }
    case "error":
      if (turnId === undefined) return undefined
      return { type, seq, at, turnId, message: str(u, "message") ?? "the turn failed", failure: u["failure"] ?? null }
    case "outgoing":
      if (text === undefined || iface === undefined) return undefined
      return {
        type,
        seq,
        at,
        text,
        interface: iface,
        ...(turnId === undefined ? {} : { turnId }),
        ...(channel === undefined ? {} : { channel })
      }
    case "heartbeat": {
      const outcome = outcomeOf(str(u, "outcome"))
      if (outcome === undefined) return undefined
      return { type, seq, at, outcome, reason: str(u, "reason") ?? "", ...(turnId === undefined ? {} : { turnId }) }
    }
    case "reset":
      return { type, seq, at, missedFrom: num(u, "missedFrom") ?? 0 }
    default:
      return undefined
  }
}

/** The failure's tag (ProviderFailed, WatchdogFired, …) when the error event carries one. */
export const failureTag = (failure: unknown): string | undefined =>
  isObject(failure) ? str(failure, "_tag") : typeof failure === "string" ? failure : undefined
