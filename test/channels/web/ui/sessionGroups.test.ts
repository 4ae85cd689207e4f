import { describe, expect, it } from "@effect/vitest"
import { byConversation, decodeSessions } from "../../../../src/channels/web/ui/memory/responses.js"

// The Sessions tab groups the sessions by conversation: the operator's first, then the others by their latest session.

const session = (id: string, modifiedAt: string, label: Record<string, unknown>) => ({
  id,
  createdAt: modifiedAt,
  modifiedAt,
  messages: 2,
  bytes: 100,
  current: false,
  ...label
})

const operator = { conversation: "main", person: { userId: "operator", name: "operator" }, channel: "main" }
const alice = { conversation: "telegram-555", person: { userId: "telegram:555", name: "Alice" }, channel: "telegram DM" }
const group = { conversation: "telegram--100", person: null, channel: "telegram group -100" }

describe("the Sessions tab's conversations", () => {
  it("groups sessions under their conversation, the operator's first, the others by their latest session", () => {
    const decoded = decodeSessions({
      currentSessionId: "m2",
      sessions: [
        session("m1", "2026-11-20T10:00:00.000Z", operator),
        session("a1_telegram-555", "2026-11-21T10:00:00.000Z", alice),
        session("g1_telegram--100", "2026-11-22T10:00:00.000Z", group),
        session("m2", "2026-11-23T09:00:00.000Z", operator),
        session("a2_telegram-555", "2026-11-23T10:00:00.000Z", alice)
      ]
    })
    expect(decoded?.find((s) => s.id === "a2_telegram-555")).toMatchObject({
      conversation: "telegram-555",
      person: { userId: "telegram:555", name: "Alice" },
      channel: "telegram DM"
    })
    expect(byConversation(decoded ?? []).map((g) => [g.conversation, g.person?.name ?? null, g.channel, g.sessions.map((s) => s.id)])).toEqual([
      ["main", "operator", "main", ["m2", "m1"]],
      ["telegram-555", "Alice", "telegram DM", ["a2_telegram-555", "a1_telegram-555"]],
      ["telegram--100", null, "telegram group -100", ["g1_telegram--100"]]
    ])
  })

  it("takes a server's answer from before conversations as the operator's sessions", () => {
    const decoded = decodeSessions({
      currentSessionId: "s1",
      sessions: [{ id: "s1", createdAt: "2026-11-20T10:00:00.000Z", modifiedAt: "2026-11-20T10:00:00.000Z", messages: 1, bytes: 10, current: true }]
    })
    expect(decoded).toEqual([expect.objectContaining({ id: "s1", conversation: "main", person: null, channel: "main" })])
    expect(byConversation(decoded ?? []).map((g) => g.conversation)).toEqual(["main"])
  })
})
