import { describe, expect, it } from "@effect/vitest"
import { conversationOfChat } from "../../src/session/conversationIds.js"
import { labelConversation, personText } from "../../src/users/conversationLabels.js"

// Whom a conversation is with and where, from its id and the paired users: every kind of chat a channel makes.

const users = [
  { interface: "telegram", userId: "555", chatId: "555", displayName: "Alice" },
  { interface: "slack", userId: "U7", chatId: "D0123", displayName: "Bob" },
  { interface: "telegram", userId: "77", chatId: "77", displayName: "  " },
  { interface: "telegram", userId: "42", chatId: "-1001234", displayName: "Carol" }
]

const label = (iface: string, chat: string) => labelConversation(conversationOfChat(iface, chat), users)

describe("labelConversation", () => {
  it("names the person and place of every kind of conversation", () => {
    expect(labelConversation("main", users)).toEqual({ conversation: "main", person: { userId: "operator", name: "operator" }, channel: "main" })
    expect(label("telegram", "555")).toMatchObject({ person: { userId: "telegram:555", name: "Alice" }, channel: "telegram DM" })
    // A Slack DM is the channel the user paired from.
    expect(label("slack", "D0123")).toMatchObject({ person: { userId: "slack:U7", name: "Bob" }, channel: "slack DM" })
    // A group is nobody's, even when a user first paired from it.
    expect(label("telegram", "-1001234")).toMatchObject({ person: null, channel: "telegram group -1001234" })
    expect(label("slack", "C0123:1700000000.000100")).toMatchObject({ person: null, channel: "slack thread C0123" })
    // A Telegram DM names its user when nobody is paired any more; a Slack DM of nobody known does not.
    expect(label("telegram", "999")).toMatchObject({ person: { userId: "telegram:999", name: null }, channel: "telegram DM" })
    expect(label("slack", "D9")).toMatchObject({ person: null, channel: "slack DM" })
    // A user paired without a name is named by their id.
    expect(label("telegram", "77").person).toEqual({ userId: "telegram:77", name: null })
    expect(labelConversation("odd", users)).toEqual({ conversation: "odd", person: null, channel: "odd" })
  })

  it("writes a person as one cell", () => {
    expect(personText({ userId: "operator", name: "operator" })).toBe("operator")
    expect(personText({ userId: "telegram:555", name: "Alice" })).toBe("Alice (telegram:555)")
    expect(personText({ userId: "telegram:999", name: null })).toBe("telegram:999")
    expect(personText(null)).toBe("—")
  })
})
