import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { savedReply } from "../../src/channels/leftoverReplies.js"
import { AssistantMessage, Envelope, type SessionMessage, ToolResultMessage, TurnFailedMessage, UserMessage } from "../../src/session/messages.js"

const at = "2026-01-01T10:00:00.000Z"
const user = (turn: string, iface: string, text: string) =>
  new UserMessage({ text, at, envelope: new Envelope({ interface: iface, channel: iface, userId: iface, time: at, turn }) })
const answer = (text: string) => new AssistantMessage({ text, at })
const calls = (id: string) => new AssistantMessage({ text: "", toolCalls: [{ id, name: "glob", params: {} }], at })
const result = (id: string) => new ToolResultMessage({ toolCallId: id, toolName: "glob", isError: false, result: "a.md", at })

const reply = (messages: ReadonlyArray<SessionMessage>, turn: string) => Option.getOrUndefined(savedReply(messages, turn))

describe("savedReply: the reply a restart delivers to a turn's leftover placeholder", () => {
  it("is the turn's own reply, not that of a turn after it (another person's, on another channel)", () => {
    const messages = [user("1", "telegram", "alice asks"), answer("for alice"), user("2", "web", "bob asks"), answer("for bob")]
    expect(reply(messages, "1")).toBe("for alice")
    expect(reply(messages, "2")).toBe("for bob")
  })

  it("is none for a turn cut before its answer, whatever later turns answered", () => {
    const interrupted = [user("1", "slack", "alice asks"), user("2", "web", "bob asks"), answer("for bob")]
    expect(reply(interrupted, "1")).toBeUndefined()
    const cutAfterTools = [user("1", "slack", "alice asks"), calls("c1"), result("c1"), user("2", "web", "bob asks"), answer("for bob")]
    expect(reply(cutAfterTools, "1")).toBeUndefined()
    // Her next message after a kill mid-tools is a turn of its own, not one injected into the cut one.
    const sameChat = [user("1", "slack", "alice asks"), calls("c1"), result("c1"), user("2", "slack", "alice again"), answer("second")]
    expect(reply(sameChat, "1")).toBeUndefined()
    const cutMidTools = [user("1", "slack", "alice asks"), calls("c1"), user("2", "web", "bob asks"), answer("for bob")]
    expect(reply(cutMidTools, "1")).toBeUndefined()
  })

  it("is none for a turn that was stopped or failed, even when it had said something", () => {
    const failed = (turn: string) => new TurnFailedMessage({ failure: "Stopped", message: "stopped by the operator", turn, at })
    expect(reply([user("1", "telegram", "alice asks"), answer("Here is the beginn"), failed("1")], "1")).toBeUndefined()
    expect(reply([user("1", "telegram", "alice asks"), failed("1"), user("2", "web", "bob asks"), answer("for bob")], "1")).toBeUndefined()
  })

  it("takes a message injected into the turn (it carries the turn's id) as part of it, and the turn's last answer", () => {
    const messages = [
      user("1", "telegram", "alice asks"),
      calls("c1"),
      result("c1"),
      user("1", "telegram", "alice adds"),
      answer("for alice, both"),
      user("4", "web", "bob asks"),
      answer("for bob")
    ]
    expect(reply(messages, "1")).toBe("for alice, both")
  })

  it("is none for a turn that ended with NO_REPLY or an empty answer, and for an unknown turn", () => {
    expect(reply([user("1", "telegram", "hi"), answer("NO_REPLY"), user("2", "web", "x"), answer("y")], "1")).toBeUndefined()
    expect(reply([user("1", "telegram", "hi"), answer(" "), user("2", "web", "x"), answer("y")], "1")).toBeUndefined()
    expect(reply([user("1", "telegram", "hi"), answer("y")], "9")).toBeUndefined()
  })
})
