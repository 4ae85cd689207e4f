import { describe, expect, it } from "vitest"
import type { AgentEvent, AgentEventInput } from "../../../../src/channels/web/api.js"
import {
  applyApprovalEvent,
  loadApprovals,
  noApprovals,
  resolutionText,
  resolveApproval,
  timeLeft
} from "../../../../src/channels/web/ui/approvals.js"
import { addNotice, applyEvent, emptyChat } from "../../../../src/channels/web/ui/chatState.js"
import { foldLive } from "../../../../src/channels/web/ui/liveFold.js"
import { decodeApprovals, decodeChannels, decodeEvent, parseJson, type PendingApproval } from "../../../../src/channels/web/ui/wire.js"

const at = "2026-11-23T08:00:00.000Z"

const frame = (input: Record<string, unknown>, seq = 1) => JSON.stringify({ ...input, seq, at })

const decoded = (inputs: ReadonlyArray<AgentEventInput>, from = 1): ReadonlyArray<AgentEvent> =>
  inputs.map((input, i) => {
    const event = decodeEvent(frame(input, from + i))
    if (event === undefined) throw new Error(`the UI could not decode ${JSON.stringify(input)}`)
    return event
  })

const asked = (id: string, expiresAt: string, args: unknown = { command: "rm -rf build" }) => ({
  type: "approval" as const,
  id,
  toolId: "bash",
  args,
  reason: "bash is DESTRUCTIVE",
  interface: "telegram",
  channel: "chat-7",
  userId: "42",
  requestedAt: "2026-11-23T08:00:00.000Z",
  expiresAt
})
const resolved = (id: string, outcome: "approved" | "denied" | "timeout", by = "operator") => ({
  type: "approval-resolved" as const,
  id,
  approved: outcome === "approved",
  outcome,
  by
})

const pending = (id: string, expiresAt: string): PendingApproval => {
  const { type: _type, ...rest } = asked(id, expiresAt)
  return rest
}

describe("approval events on the wire", () => {
  it("decodes an approval with its arguments in full, whatever JSON they are", () => {
    const args = { command: "echo <img src=x onerror=alert(1)>", env: { A: [1, 2, { deep: true }] } }
    expect(decodeEvent(frame(asked("a1", at, args)))).toEqual({ ...asked("a1", at, args), seq: 1, at })
    expect(decodeEvent(frame(asked("a2", at, "plain text")))).toMatchObject({ id: "a2", args: "plain text" })
    expect(decodeEvent(frame(asked("a3", at, null)))).toMatchObject({ id: "a3", args: null })
  })

  it("decodes a resolution with each outcome", () => {
    for (const outcome of ["approved", "denied", "timeout"] as const) {
      expect(decodeEvent(frame(resolved("a1", outcome, "telegram:42")))).toEqual({ ...resolved("a1", outcome, "telegram:42"), seq: 1, at })
    }
  })

  it("drops approval frames with a field missing or mistyped instead of trusting them", () => {
    const good = asked("a1", at)
    const bad: ReadonlyArray<Record<string, unknown>> = [
      { ...good, id: undefined },
      { ...good, id: 7 },
      { ...good, toolId: undefined },
      { ...good, reason: null },
      { ...good, interface: undefined },
      { ...good, channel: 3 },
      { ...good, userId: undefined },
      { ...good, expiresAt: undefined },
      Object.fromEntries(Object.entries(good).filter(([key]) => key !== "args")),
      { ...resolved("a1", "approved"), id: undefined },
      { ...resolved("a1", "approved"), approved: "yes" },
      { ...resolved("a1", "approved"), outcome: "maybe" },
      { ...resolved("a1", "approved"), outcome: undefined },
      { ...resolved("a1", "approved"), by: 42 }
    ]
    for (const input of bad) expect(decodeEvent(frame(input))).toBeUndefined()
    expect(decodeEvent(JSON.stringify({ ...good, at }))).toBeUndefined()
  })

  it("decodes GET /approvals, leaving out the items that are not approvals", () => {
    const item = { ...pending("a1", at), requestedAt: at }
    const answer = (body: unknown) => decodeApprovals(parseJson(JSON.stringify(body)))
    expect(answer({ approvals: [item, { id: "broken" }, "x", null] })).toEqual([item])
    expect(answer({ approvals: [] })).toEqual([])
    expect(answer({ pending: [item] })).toBeUndefined()
    expect(answer([item])).toBeUndefined()
    expect(decodeApprovals(undefined)).toBeUndefined()
  })

  it("reads the chat channels of GET /status, leaving out the malformed", () => {
    const telegram = { interface: "telegram", state: "connected", detail: "", since: at }
    const slack = { interface: "slack", state: "reconnecting", detail: "socket closed", since: at }
    expect(decodeChannels({ channels: [telegram, slack, { interface: "x", state: "exploded" }, { state: "connected" }, 5] }))
      .toEqual([telegram, slack])
    expect(decodeChannels({ name: "agent" })).toEqual([])
  })
})

describe("pending approvals", () => {
  const early = "2026-11-23T08:01:00.000Z"
  const late = "2026-11-23T08:02:00.000Z"

  it("adds each approval once, oldest first, and drops it when it resolves", () => {
    const events = decoded([asked("b", late), asked("a", early), asked("b", late)])
    const state = events.reduce(applyApprovalEvent, noApprovals)
    expect(state.pending.map((p) => p.id)).toEqual(["a", "b"])
    const after = decoded([resolved("a", "approved")], 4).reduce(applyApprovalEvent, state)
    expect(after.pending.map((p) => p.id)).toEqual(["b"])
    expect(decoded([resolved("b", "timeout")], 5).reduce(applyApprovalEvent, after).pending).toEqual([])
  })

  it("a load replaces the list but never brings back one resolved meanwhile; a replayed ask stays resolved", () => {
    const answered = decoded([asked("a", early), resolved("a", "denied")]).reduce(applyApprovalEvent, noApprovals)
    // GET /approvals left the server before the resolution did.
    const loaded = loadApprovals(answered, [pending("b", late), pending("a", early)])
    expect(loaded.pending.map((p) => p.id)).toEqual(["b"])
    expect(decoded([asked("a", early)], 3).reduce(applyApprovalEvent, loaded).pending.map((p) => p.id)).toEqual(["b"])
    // What the server no longer lists (resolved while the stream was away) goes.
    const seen = decoded([asked("c", early)]).reduce(applyApprovalEvent, noApprovals)
    expect(loadApprovals(seen, []).pending).toEqual([])
  })

  it("says how long is left, and nothing once it passed", () => {
    const now = Date.parse(at)
    expect(timeLeft("2026-11-23T08:01:05.000Z", now)).toBe("1:05")
    expect(timeLeft("2026-11-23T08:00:00.400Z", now)).toBe("0:01")
    expect(timeLeft(at, now)).toBeUndefined()
    expect(timeLeft("not a time", now)).toBeUndefined()
  })
})

describe("approvals in the chat log", () => {
  it("notes the ask, then writes its resolution over it", () => {
    const events = decoded([asked("a", at), resolved("a", "approved")])
    const waiting = applyEvent(emptyChat, events[0]!)
    expect(waiting.items).toEqual([{ kind: "notice", key: "approval:a", text: "bash waits for approval", at, toolId: "bash" }])
    const done = applyEvent(waiting, events[1]!)
    expect(done.items).toEqual([{ kind: "notice", key: "approval:a", text: "bash approved by operator", at }])
    // A replay of either changes nothing.
    expect(events.reduce(applyEvent, done)).toBe(done)
  })

  it("notes a resolution whose ask this page never saw", () => {
    const [denied, timedOut] = decoded([resolved("x", "denied", "telegram:42"), resolved("y", "timeout", "timeout")])
    const state = applyEvent(applyEvent(emptyChat, denied!), timedOut!)
    expect(state.items.map((i) => i.kind === "notice" ? i.text : i.kind)).toEqual([
      "a tool call denied by telegram:42",
      "a tool call: nobody answered in time, denied"
    ])
  })

  it("says each outcome in words", () => {
    expect(resolutionText({ outcome: "approved", by: "operator" }, "bash")).toBe("bash approved by operator")
    expect(resolutionText({ outcome: "denied", by: "slack:U1" }, "bash")).toBe("bash denied by slack:U1")
    expect(resolutionText({ outcome: "timeout", by: "timeout" }, "bash")).toBe("bash: nobody answered in time, denied")
  })

  it("adds a page's own notice once per key", () => {
    const once = addNotice(emptyChat, { key: "answer:a", text: "already answered", at })
    expect(addNotice(once, { key: "answer:a", text: "already answered", at })).toBe(once)
    expect(once.items).toHaveLength(1)
  })

  it("names the tool of an approval the page loaded but never saw asked, and takes it off the pending list", () => {
    const loaded = { chat: emptyChat, approvals: loadApprovals(noApprovals, [pending("a", at), pending("b", at)]) }
    const live = foldLive(loaded, decoded([resolved("a", "denied", "operator")]))
    expect(live.chat.items.map((i) => i.kind === "notice" ? i.text : i.kind)).toEqual(["bash denied by operator"])
    expect(live.approvals.pending.map((p) => p.id)).toEqual(["b"])
    // Replayed, the resolution changes neither.
    expect(foldLive(live, decoded([resolved("a", "denied", "operator")]))).toEqual(live)
  })

  it("names the tool of an approval this page answered before the resolution's event came", () => {
    const waiting = foldLive({ chat: emptyChat, approvals: noApprovals }, decoded([asked("a", at)]))
    // decide() took the answer: the approval left the list before its event arrived.
    const answered = { ...waiting, approvals: resolveApproval(waiting.approvals, "a") }
    expect(answered.approvals.pending).toEqual([])
    const live = foldLive(answered, decoded([resolved("a", "approved")], 2))
    expect(live.chat.items.map((i) => i.kind === "notice" ? i.text : i.kind)).toEqual(["bash approved by operator"])
  })
})
