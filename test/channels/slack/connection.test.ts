import { describe, expect, it } from "@effect/vitest"
import { Chunk, Clock, Effect, Fiber, Option, TestClock } from "effect"
import type { ChannelsShape, ChannelState } from "../../../src/tools/Channels.js"
import { FakeReply, make as makeFakeModel } from "../../support/fakeModelServer.js"
import * as FakeSlack from "../../support/fakeSlack.js"
import { advanceUntil, agentFolder, pairUser, startSlackAgent } from "./harness.js"

const slackChannel = (channels: ChannelsShape) => Effect.map(channels.get("slack"), Option.getOrThrow)

const pause = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 10)))

/** Waits (in real time; the TestClock stands still) until the Slack channel is in `state`. */
const awaitState = (channels: ChannelsShape, state: ChannelState) =>
  Effect.gen(function*() {
    const channel = yield* slackChannel(channels)
    for (let i = 0; i < 1000; i++) {
      const status = yield* channel.status
      if (status.state === state) return status
      yield* pause
    }
    return yield* Effect.dieMessage(`the Slack channel never became ${state}: ${JSON.stringify(yield* channel.status)}`)
  })

/** Waits until something sleeps until `atMs` on the TestClock. */
const awaitSleepUntil = (atMs: number) =>
  Effect.gen(function*() {
    while (!Chunk.some(yield* TestClock.sleeps(), (wakeAt) => wakeAt === atMs)) yield* pause
  })

describe("Slack connection", () => {
  it.scoped("a `disconnect` frame moves the channel to a fresh connection at once; envelopes on it are taken", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: agentFolder(model), slack })
      yield* pairUser(agent.pairings, "U1")
      yield* slack.awaitConnections(1)
      yield* awaitState(agent.channels, "connected")

      yield* slack.disconnect("refresh_requested")
      yield* slack.awaitConnections(2)
      expect(yield* slack.callsOf("apps.connections.open")).toHaveLength(2)
      // The app token opens connections; auth.test was asked once, with the bot token.
      expect((yield* slack.callsOf("apps.connections.open")).every((call) => call.token === slack.appToken)).toBe(true)
      expect((yield* slack.callsOf("auth.test")).map((call) => call.token)).toEqual([slack.botToken])
      yield* model.reply(FakeReply.text("still here"))
      const dm = yield* slack.dm("U1", "are you there?")
      yield* slack.awaitAck(dm.envelopeId)
      yield* model.awaitRequests(1)
      yield* awaitState(agent.channels, "connected")
    }))

  it.scoped("a dropped socket is reconnected after a backoff on the Clock, and the status says so meanwhile", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: agentFolder(model), slack })
      yield* slack.awaitConnections(1)
      yield* awaitState(agent.channels, "connected")

      const droppedAt = yield* Clock.currentTimeMillis
      yield* slack.drop
      const status = yield* awaitState(agent.channels, "reconnecting")
      expect(status.detail).not.toBe("")
      expect(yield* slack.connections).toBe(1)
      yield* advanceUntil(slack.awaitConnections(2))
      const opens = yield* slack.callsOf("apps.connections.open")
      expect(opens[1]!.atMs - droppedAt).toBeGreaterThanOrEqual(1000)
      yield* awaitState(agent.channels, "connected")
    }))

  it.scoped("a 429 is waited out for its Retry-After on the Clock, then the call is made again", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: agentFolder(model), slack })
      yield* slack.awaitConnections(1)
      const channel = yield* slackChannel(agent.channels)
      yield* slack.script("chat.postMessage", { _tag: "RateLimited", retryAfterSeconds: 3 })

      const start = yield* Clock.currentTimeMillis
      const sending = yield* Effect.fork(channel.send("U1", "a proactive note"))
      yield* slack.awaitCalls("chat.postMessage", 1)
      yield* awaitSleepUntil(start + 3000)
      yield* TestClock.adjust("2999 millis")
      expect(yield* slack.callsOf("chat.postMessage")).toHaveLength(1)
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(sending)
      const posts = yield* slack.callsOf("chat.postMessage")
      expect(posts).toHaveLength(2)
      expect(posts[1]!.atMs - posts[0]!.atMs).toBe(3000)
      // A user id is not a conversation: send opened the DM first.
      expect((yield* slack.callsOf("conversations.open"))[0]!.body).toEqual({ users: "U1" })
      expect(posts[1]!.body).toMatchObject({ channel: "DU1", text: "a proactive note" })
    }))

  it.scoped("invalid_auth stops the channel with its reason; send then fails not_connected and the agent goes on", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      yield* slack.revoke
      const agent = yield* startSlackAgent({ dir: agentFolder(model), slack })
      const status = yield* awaitState(agent.channels, "stopped")
      expect(status.detail).toContain("invalid_auth")
      expect(yield* slack.callsOf("apps.connections.open")).toHaveLength(0)
      // No retry, however long we wait.
      yield* TestClock.adjust("10 minutes")
      expect(yield* slack.callsOf("auth.test")).toHaveLength(1)

      const channel = yield* slackChannel(agent.channels)
      const error = yield* Effect.flip(channel.send("DU1", "hello?"))
      expect(error.reason).toBe("not_connected")
      expect(error.message).toContain("invalid_auth")

      yield* model.reply(FakeReply.text("the agent is fine"))
      yield* agent.runtime.submit({ interface: "cli", channel: "cli", userId: "operator", text: "still alive?" })
      yield* model.awaitRequests(1)
    }))

  it.scoped("without both tokens the channel is off: nothing registered, nothing asked of Slack", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const agent = yield* startSlackAgent({ dir: agentFolder(model), slack, env: { SLACK_APP_TOKEN: "" } })
      expect(Option.isNone(yield* agent.channels.get("slack"))).toBe(true)
      expect(yield* agent.channels.statuses).toEqual([])
      expect(yield* slack.calls).toEqual([])
    }))
})
