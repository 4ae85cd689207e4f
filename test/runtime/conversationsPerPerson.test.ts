import { describe, expect, it } from "@effect/vitest"
import { Effect, PubSub } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { FakeReply, make as makeFakeModel } from "../support/fakeModelServer.js"
import { make as makeFakeTelegram } from "../support/fakeTelegram.js"
import { turnEvents } from "../support/runtimeTurn.js"
import { agentFolder, pair, type RunningAgent, startAgent } from "../channels/telegram/harness.js"

// Conversations per person (issue 26): the operator's conversation is `main`; a paired user's direct chat and a group
// chat each have a session of their own, and a turn is sent only its own conversation.

const alice = { id: 42, first_name: "Alice" }
const carol = { id: 77, first_name: "Carol" }
const group = { chatId: -1001, chatType: "supergroup" as const }
const marker = "my bank PIN is 4711"

const bodies = (requests: ReadonlyArray<{ readonly body: unknown }>) => requests.map((r) => JSON.stringify(r.body))

/** The agent's session files: name → text. */
const sessions = (dir: string) => {
  const folder = NodePath.join(dir, ".kern/sessions")
  return new Map(NodeFs.readdirSync(folder).filter((name) => name.endsWith(".jsonl")).map((name) =>
    [name.slice(0, -6), NodeFs.readFileSync(NodePath.join(folder, name), "utf8")] as const
  ))
}

/** An operator message from the terminal, answered: its whole turn awaited. */
const operatorSays = (agent: RunningAgent, text: string) =>
  Effect.scoped(Effect.gen(function*() {
    const events = yield* PubSub.subscribe(agent.runtime.events)
    const queued = yield* agent.runtime.submit({ interface: "terminal", channel: "terminal", userId: "operator", text })
    return yield* turnEvents(events, queued.turnId)
  }))

/**
 * The operator tells the agent the marker; then `user` (paired, as an operator when asked) asks in a direct chat. The
 * model request of the user's turn, and the agent's session files.
 */
const askedAfterTheOperator = (
  user: typeof alice,
  options: { readonly operator?: boolean; readonly config?: Record<string, unknown> } = {}
) =>
  Effect.gen(function*() {
    const model = yield* makeFakeModel
    const telegram = yield* makeFakeTelegram()
    const dir = agentFolder(model, options.config)
    const agent = yield* startAgent(dir, telegram)
    yield* pair(agent, user, options.operator === true)
    yield* model.reply(FakeReply.text("noted"))
    yield* operatorSays(agent, `remember: ${marker}`)
    yield* model.reply(FakeReply.text("hello there"))
    yield* telegram.message({ from: user, text: "what did the operator say before?" })
    yield* telegram.awaitChat(user.id, (messages) => messages.some((m) => m.text === "hello there"))
    const request = bodies(yield* model.modelRequests)[1]
    yield* agent.stop
    return { request, files: [...sessions(dir).keys()] }
  })

describe("conversations per person", () => {
  it.scopedLive("a paired friend's DM and a group each get a conversation of their own; neither is sent the operator's", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const dir = agentFolder(model)
      const agent = yield* startAgent(dir, telegram)
      yield* pair(agent, alice)

      yield* model.reply(FakeReply.text("noted"))
      yield* operatorSays(agent, `remember: ${marker}`)

      yield* model.reply(FakeReply.text("hello Alice"))
      yield* telegram.message({ from: alice, text: "what did the operator say before?" })
      yield* telegram.awaitChat(alice.id, (messages) => messages.some((m) => m.text === "hello Alice"))

      yield* model.reply(FakeReply.text("hello group"))
      yield* telegram.message({ ...group, from: alice, text: "@kern_test_bot what is going on here?" })
      yield* telegram.awaitChat(group.chatId, (messages) => messages.some((m) => m.text === "hello group"))

      yield* model.reply(FakeReply.text("still here"))
      yield* operatorSays(agent, "and now?")

      const [operator, friend, inGroup, operatorAgain] = bodies(yield* model.modelRequests)
      expect(operator).toContain(marker)
      expect(friend).toContain("what did the operator say before?")
      expect(friend).not.toContain(marker)
      expect(inGroup).toContain("what is going on here?")
      expect(inGroup).not.toContain(marker)
      expect(inGroup).not.toContain("what did the operator say before?")
      // The operator's conversation goes on as before, without the others' messages.
      expect(operatorAgain).toContain(marker)
      expect(operatorAgain).not.toContain("what did the operator say before?")
      expect(operatorAgain).not.toContain("what is going on here?")

      const files = sessions(dir)
      const names = [...files.keys()]
      expect(names.filter((id) => !id.includes("_"))).toHaveLength(1)
      const friendSession = names.find((id) => id.endsWith("_telegram-42"))
      const groupSession = names.find((id) => id.endsWith("_telegram--1001"))
      expect(friendSession).toBeDefined()
      expect(groupSession).toBeDefined()
      expect(files.get(friendSession!)).not.toContain(marker)
      expect(files.get(groupSession!)).not.toContain(marker)
      expect(files.get(names.find((id) => !id.includes("_"))!)).not.toContain("what did the operator say before?")
      yield* agent.stop
    }))

  it.scopedLive("the operator's own paired account in a direct chat is the operator's conversation", () =>
    Effect.gen(function*() {
      const { request, files } = yield* askedAfterTheOperator(carol, { operator: true })
      expect(request).toContain(marker)
      expect(files).toHaveLength(1)
    }))

  it.scopedLive("conversations \"shared\": one conversation for everybody, as before", () =>
    Effect.gen(function*() {
      const { request, files } = yield* askedAfterTheOperator(alice, { config: { conversations: "shared" } })
      expect(request).toContain(marker)
      expect(files).toHaveLength(1)
    }))

  it.scopedLive("turns of different conversations run side by side: a friend's long turn does not hold up the operator's", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const agent = yield* startAgent(agentFolder(model), telegram)
      yield* pair(agent, alice)
      // The friend's answer streams one frame and then hangs, its turn running; the operator's is answered meanwhile.
      yield* model.reply(FakeReply.text("a very long answer", { hangAfter: 1 }), FakeReply.text("operator answered"))
      yield* telegram.message({ from: alice, text: "write me an essay" })
      yield* model.awaitRequests(1)
      const events = yield* operatorSays(agent, "quick question")
      expect(events.at(-1)).toMatchObject({ type: "finish", reply: "operator answered" })
      yield* agent.stop
    }))
})
