import { Effect } from "effect"
import { FakeReply, makeWith } from "../support/fakeModelServer.js"

/** The marker every chaos message carries: which channel sent it and its number there, e.g. `CHAOS-tg-0042`. */
export const markerPattern = /CHAOS-[a-z]+-\d{4}/g

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The markers in the last user message of a Chat Completions (`messages`) or Responses (`input`) request. */
export const lastUserMarkers = (body: Record<string, unknown>): ReadonlyArray<string> => {
  const list = Array.isArray(body["messages"]) ? body["messages"] : Array.isArray(body["input"]) ? body["input"] : []
  const users = list.filter((item): item is Record<string, unknown> => isRecord(item) && item["role"] === "user")
  const last = users.at(-1)
  return last === undefined ? [] : [...JSON.stringify(last).matchAll(markerPattern)].map((m) => m[0])
}

/** The reply text that answers a marker. */
export const ackOf = (marker: string) => `ack ${marker}`

/**
 * A model that answers each turn with `ack <marker>` of the message it was given, after a short random think (so a
 * kill lands mid-turn now and then, as with a real model), and "ok" to anything else (a summary request).
 */
export const makeEchoModel = (maxThinkMs: number) =>
  makeWith({
    record: false,
    fallback: (body) => {
      const markers = lastUserMarkers(body)
      const delay = Math.floor(Math.random() * maxThinkMs)
      return FakeReply.text(markers.length === 0 ? "ok" : markers.map(ackOf).join(" "), { delay: `${delay} millis` })
    }
  })

export type EchoModel = Effect.Effect.Success<ReturnType<typeof makeEchoModel>>
