import { describe, expect, it } from "@effect/vitest"
import { DateTime } from "effect"
import type { AgentEventInput } from "../../src/channels/AgentEvent.js"
import { showEvent } from "../../src/channels/terminalFormat.js"
import { noUsage } from "../../src/turn/TurnEvent.js"

const zone = DateTime.zoneUnsafeMakeNamed("Europe/Berlin")
const show = (event: AgentEventInput) => showEvent(event, zone)
const incoming = (iface: string, channel: string, messageId: string, turnId = messageId): AgentEventInput => ({
  type: "incoming",
  turnId,
  conversationId: `${iface}:${channel}`,
  messageId,
  text: "hello there",
  interface: iface,
  channel,
  userId: "operator"
})

describe("the terminal's view of the agent's events (the TUI in process and attached alike)", () => {
  it("shows other channels' messages with their channel, the terminal's own only when it joins a running turn", () => {
    expect(show(incoming("web", "web", "7"))).toBe("\n[web web] hello there\n")
    expect(show(incoming("telegram", "42", "8"))).toBe("\n[telegram 42] hello there\n")
    expect(show(incoming("terminal", "terminal", "9"))).toBe("")
    expect(show(incoming("terminal", "terminal", "10", "9"))).toBe("\n  (+ hello there)\n")
    // A heartbeat's prompt is not shown; its heartbeat event is.
    expect(show(incoming("heartbeat", "heartbeat", "11"))).toBe("")
    expect(show({ type: "heartbeat", outcome: "sent", reason: "queued", turnId: "11" })).toBe("\n[heartbeat]\n")
  })

  it("ends a reply with a newline, delivered or not; the message tool's sends show, a turn's reply only once", () => {
    const ids = { turnId: "1", conversationId: "terminal:terminal" }
    expect(show({ type: "finish", ...ids, reply: "Noted it.", steps: 1, usage: noUsage, delivered: false })).toBe("\n")
    expect(show({ type: "finish", ...ids, reply: "", steps: 1, usage: noUsage, delivered: false })).toBe("")
    expect(show({ type: "outgoing", ...ids, text: "Noted it.", interface: "terminal", channel: "terminal" })).toBe("")
    expect(show({ type: "outgoing", text: "The build is green.", interface: "telegram", channel: "42" })).toBe("\n[→ telegram 42] The build is green.\n")
  })

  it("says when an approval is denied unanswered in the agent's zone", () => {
    const asked = show({
      type: "approval",
      id: "apr_1",
      toolId: "bash",
      args: { command: "rm -rf build" },
      reason: "destructive",
      interface: "web",
      channel: "web",
      userId: "operator",
      requestedAt: "2026-07-01T10:00:00.000Z",
      expiresAt: "2026-07-01T10:05:00.000Z"
    })
    expect(asked).toContain("denied at 12:05:00 without an answer")
  })
})
