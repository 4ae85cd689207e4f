import { describe, expect, it } from "vitest"
import type { AgentEvent, AgentEventInput } from "../../../../src/channels/web/api.js"
import {
  addSent,
  applyEvent,
  type ChatState,
  compactionNote,
  emptyChat,
  type Item,
  replaceWithHistory
} from "../../../../src/channels/web/ui/chatState.js"
import { decodeHistory, itemsFromMessages, prependPage } from "../../../../src/channels/web/ui/historyItems.js"
import { splitTagged } from "../../../../src/channels/web/ui/memory/xmlSections.js"
import { decodeEvent } from "../../../../src/channels/web/ui/wire.js"
import { compactionHeader } from "../../../../src/tools/compaction.js"

const at = "2026-11-23T08:00:00.000Z"
const usage = { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0, costUsdCents: 0 }

/** Numbers events from 1 as the server does, through the UI's own decoder (JSON, as they arrive in SSE frames). */
const numbered = (inputs: ReadonlyArray<AgentEventInput>, from = 1): ReadonlyArray<AgentEvent> =>
  inputs.map((input, i) => {
    const decoded = decodeEvent(JSON.stringify({ ...input, seq: from + i, at }))
    if (decoded === undefined) throw new Error(`the UI could not decode ${JSON.stringify(input)}`)
    return decoded
  })

const fold = (state: ChatState, events: ReadonlyArray<AgentEvent>) => events.reduce(applyEvent, state)

const textOf = (item: Item | undefined) =>
  item?.kind === "assistant" ? item.parts.flatMap((p) => p.kind === "text" ? [p.text] : []).join("") : undefined

const turn = numbered([
  { type: "incoming", turnId: "t1", conversationId: "web:1", messageId: "t1", text: "hi", interface: "web", channel: "1", userId: "operator" },
  { type: "thinking", turnId: "t1", conversationId: "web:1", step: 1 },
  { type: "text-delta", turnId: "t1", conversationId: "web:1", delta: "Hel" },
  { type: "tool-call", turnId: "t1", conversationId: "web:1", id: "c1", name: "read", params: { path: "a" } },
  { type: "tool-result", turnId: "t1", conversationId: "web:1", id: "c1", name: "read", isError: false, text: "A", durationMs: 5 },
  { type: "text-delta", turnId: "t1", conversationId: "web:1", delta: "lo" },
  { type: "finish", turnId: "t1", conversationId: "web:1", reply: "lo", steps: 2, usage, delivered: true },
  { type: "outgoing", turnId: "t1", text: "lo", interface: "web" }
])

describe("chat state", () => {
  it("folds a turn into one user item and one assistant item with text, tool and text in order", () => {
    const state = fold(emptyChat, turn)
    expect(state.items.map((i) => i.kind)).toEqual(["user", "assistant"])
    const reply = state.items[1]
    expect(reply?.kind === "assistant" && reply.parts.map((p) => p.kind)).toEqual(["text", "tool", "text"])
    expect(reply?.kind === "assistant" && reply.status).toBe("done")
    expect(state.lastSeq).toBe(8)
  })

  it("ignores a replay of events it has seen: resuming after a drop gives every delta once", () => {
    const beforeDrop = fold(emptyChat, turn.slice(0, 3))
    // The server replays from Last-Event-ID; a proxy or a racing reconnect may repeat some already seen.
    const resumed = fold(beforeDrop, [...turn.slice(1), ...turn.slice(2)])
    expect(textOf(resumed.items[1])).toBe("Hello")
    expect(resumed.items).toHaveLength(2)
  })

  it("marks the chat stale on a reset (the replay buffer no longer held what was missed) and takes the replay after it", () => {
    const seen = fold(emptyChat, turn)
    const reset = fold(seen, numbered([
      { type: "reset", missedFrom: 9 },
      { type: "incoming", turnId: "t9", conversationId: "web:1", messageId: "t9", text: "again", interface: "web", channel: "1", userId: "operator" }
    ], 1000))
    expect(reset.stale).toBe(true)
    expect(reset.items.map((i) => i.kind)).toEqual(["user", "assistant", "user"])
  })

  it("notes where another channel's reply went instead of showing it twice; shows a message-tool send", () => {
    const state = fold(emptyChat, numbered([
      { type: "incoming", turnId: "t2", conversationId: "web:1", messageId: "t2", text: "hey", interface: "telegram", channel: "42", userId: "42" },
      { type: "text-delta", turnId: "t2", conversationId: "web:1", delta: "yo" },
      { type: "finish", turnId: "t2", conversationId: "web:1", reply: "yo", steps: 1, usage, delivered: true },
      { type: "outgoing", turnId: "t2", text: "yo", interface: "telegram", channel: "42" },
      { type: "outgoing", text: "reminder", interface: "slack", channel: "C1" }
    ]))
    expect(state.items.map((i) => i.kind)).toEqual(["user", "assistant", "outgoing"])
    expect(state.items[1]?.kind === "assistant" && state.items[1].deliveredTo).toEqual({ interface: "telegram", channel: "42" })
  })

  it("keeps an injected message apart from the turn that took it in", () => {
    const state = fold(emptyChat, numbered([
      { type: "incoming", turnId: "t1", conversationId: "web:1", messageId: "t1", text: "first", interface: "web", channel: "1", userId: "operator" },
      { type: "text-delta", turnId: "t1", conversationId: "web:1", delta: "working" },
      { type: "incoming", turnId: "t1", conversationId: "web:1", messageId: "m2", text: "also this", interface: "web", channel: "1", userId: "operator" }
    ]))
    expect(state.items.map((i) => i.kind === "user" ? i.text : i.kind)).toEqual(["first", "assistant", "also this"])
  })

  it("shows a sent message at once as queued, once, whether its 202 or its incoming event comes first", () => {
    const incoming = numbered([{ type: "incoming", turnId: "t7", conversationId: "web:1", messageId: "m7", text: "later", interface: "web", channel: "1", userId: "operator" }])
    const sentFirst = addSent(emptyChat, { messageId: "m7", text: "later", at })
    expect(sentFirst.items).toMatchObject([{ kind: "user", text: "later", queued: true }])
    // A reload while it waits keeps it.
    expect(replaceWithHistory(sentFirst, []).items).toHaveLength(1)
    expect(fold(sentFirst, incoming).items).toMatchObject([{ kind: "user", text: "later", queued: false }])
    const eventFirst = fold(emptyChat, incoming)
    expect(addSent(eventFirst, { messageId: "m7", text: "later", at })).toBe(eventFirst)
  })

  it("fills the reply from finish when the page joined after the deltas", () => {
    const state = fold(emptyChat, numbered([{ type: "finish", turnId: "t3", conversationId: "web:1", reply: "late **reply**", steps: 1, usage, delivered: true }]))
    expect(textOf(state.items[0])).toBe("late **reply**")
  })

  it("after a reload keeps only the turns still running below the history page", () => {
    const live = fold(emptyChat, [
      ...turn,
      ...numbered([
        { type: "incoming", turnId: "t5", conversationId: "web:1", messageId: "t5", text: "running", interface: "web", channel: "1", userId: "operator" },
        { type: "text-delta", turnId: "t5", conversationId: "web:1", delta: "par" }
      ], 9)
    ])
    const page = itemsFromMessages([{ _tag: "user", text: "hi", at }, { _tag: "assistant", text: "Hello", toolCalls: [], at }], "h")
    const reloaded = replaceWithHistory({ ...live, stale: true }, page)
    expect(reloaded.items.map((i) => i.kind === "user" ? i.text : textOf(i))).toEqual(["hi", "Hello", "running", "par"])
    expect(reloaded.stale).toBe(false)
  })
})

describe("a page loaded while a turn runs", () => {
  const recorded = decodeHistory({
    sessionId: "s",
    messages: [
      { index: 0, message: { _tag: "user", text: "build it", at } },
      { index: 1, message: { _tag: "assistant", text: "", toolCalls: [{ id: "c1", name: "bash", params: { command: "make" } }], at } }
    ],
    total: 2,
    nextBefore: null
  }, "h2")

  it("goes on in the recorded steps' item instead of showing the turn twice", () => {
    const state = fold({ ...emptyChat, items: recorded?.items ?? [] }, numbered([
      { type: "tool-result", turnId: "t9", conversationId: "web:1", id: "c1", name: "bash", isError: false, text: "built", durationMs: 5 },
      { type: "thinking", turnId: "t9", conversationId: "web:1", step: 2 },
      { type: "text-delta", turnId: "t9", conversationId: "web:1", delta: "Done." },
      { type: "finish", turnId: "t9", conversationId: "web:1", reply: "Done.", steps: 2, usage, delivered: true }
    ]))
    expect(state.items.map((i) => i.kind)).toEqual(["user", "assistant"])
    const reply = state.items[1]
    expect(reply?.kind === "assistant" && reply.status).toBe("done")
    expect(reply?.kind === "assistant" && reply.parts).toEqual([
      { kind: "tool", id: "c1", name: "bash", params: { command: "make" }, result: { text: "built", isError: false, durationMs: 5 } },
      { kind: "text", text: "Done." }
    ])
  })

  it("a turn that starts after the page (its incoming first) gets an item of its own", () => {
    const finished = decodeHistory({
      sessionId: "s",
      messages: [{ index: 0, message: { _tag: "user", text: "hi", at } }, { index: 1, message: { _tag: "assistant", text: "Hello", toolCalls: [], at } }],
      total: 2,
      nextBefore: null
    }, "h3")
    const state = fold({ ...emptyChat, items: finished?.items ?? [] }, numbered([
      { type: "incoming", turnId: "t10", conversationId: "web:1", messageId: "t10", text: "again", interface: "web", channel: "1", userId: "operator" },
      { type: "text-delta", turnId: "t10", conversationId: "web:1", delta: "Hi again" }
    ]))
    expect(state.items.map((i) => i.kind === "user" ? i.text : textOf(i))).toEqual(["hi", "Hello", "again", "Hi again"])
  })
})

describe("history", () => {
  const messages = [
    { index: 0, message: { _tag: "user", text: "list", at } },
    { index: 1, message: { _tag: "assistant", text: "", toolCalls: [{ id: "c1", name: "glob", params: {} }], at } },
    { index: 2, message: { _tag: "tool", toolCallId: "c1", toolName: "glob", isError: false, result: "a.md", at } },
    { index: 3, message: { _tag: "assistant", text: "one file", toolCalls: [], at } }
  ]

  it("groups an assistant message, its tool results and the next assistant message under one turn", () => {
    const page = decodeHistory({ sessionId: "s", messages, total: 4, nextBefore: null }, "h")
    expect(page?.before).toBeUndefined()
    expect(page?.items.map((i) => i.kind)).toEqual(["user", "assistant"])
    const reply = page?.items[1]
    expect(reply?.kind === "assistant" && reply.parts).toEqual([
      { kind: "tool", id: "c1", name: "glob", params: {}, result: { text: "a.md", isError: false } },
      { kind: "text", text: "one file" }
    ])
  })

  it("joins a turn that a page boundary split, and gives the cursor for the next older page", () => {
    const newer = decodeHistory({ sessionId: "s", messages: messages.slice(2), total: 4, nextBefore: 2 }, "n")
    const older = decodeHistory({ sessionId: "s", messages: messages.slice(0, 2), total: 4, nextBefore: null }, "o")
    expect(newer?.before).toBe("2")
    const joined = prependPage({ ...emptyChat, items: newer?.items ?? [] }, older?.items ?? [])
    expect(joined.items.map((i) => i.kind)).toEqual(["user", "assistant"])
    const reply = joined.items[1]
    expect(reply?.kind === "assistant" && reply.parts.map((p) => p.kind)).toEqual(["tool", "tool", "text"])
  })
})

describe("wire", () => {
  it("drops frames that are not kern events instead of trusting them", () => {
    for (
      const frame of [
        "not json",
        "[]",
        JSON.stringify({ type: "text-delta", turnId: "t", conversationId: "web:1", delta: "x", at }), // no seq
        JSON.stringify({ seq: 1, type: "text-delta", turnId: "t", conversationId: "web:1", delta: 5, at }),
        JSON.stringify({ seq: 1, type: "tool-call", turnId: "t", conversationId: "web:1", at }), // no id, name
        JSON.stringify({ seq: 1, type: "heartbeat", outcome: "exploded", reason: "", at }),
        // A failure the Schema does not know, or missing the fields of its kind.
        JSON.stringify({ seq: 1, type: "error", turnId: "t", conversationId: "web:1", message: "x", failure: { _tag: "Gremlins", message: "x" }, at }),
        JSON.stringify({ seq: 1, type: "error", turnId: "t", conversationId: "web:1", message: "x", failure: { _tag: "StepLimitReached", message: "x" }, at }),
        JSON.stringify({ seq: 1, type: "incoming", turnId: "t", conversationId: "web:1", messageId: "t", text: "hi", interface: "web", at }),
        JSON.stringify({ seq: 1, type: "surprise", at })
      ]
    ) expect(decodeEvent(frame), frame).toBeUndefined()
  })

  it("reads the compaction note the compactor writes", () => {
    expect(compactionNote(`${compactionHeader(40000, 12000, "art_1")}\nbody`)).toMatch(/^40000 bytes → 12000 bytes; full output is artifact art_1/)
    expect(compactionNote("plain output")).toBeUndefined()
  })

  it("splits a system prompt section into its tagged blocks", () => {
    expect(splitTagged("intro\n<rules a=\"1\">\nbe brief\n</rules>\n<x>unclosed\ntail")).toEqual([
      { tag: undefined, text: "intro" },
      { tag: "rules", text: "be brief" },
      { tag: undefined, text: "<x>unclosed\ntail" }
    ])
  })
})
