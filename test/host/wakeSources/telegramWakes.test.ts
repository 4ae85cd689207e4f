import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, identity, Layer, type Option, Scope } from "effect"
import * as NodePath from "node:path"
import { WakeSources } from "../../../src/host/wakeSources/wakeSources.js"
import { PairingStore } from "../../../src/users/PairingStore.js"
import { AgentRuntime } from "../../../src/runtime/AgentRuntime.js"
import { FakeReply, make as makeFakeModel } from "../../support/fakeModelServer.js"
import { type FakeTelegram, make as makeFakeTelegram } from "../../support/fakeTelegram.js"
import { makeTempDir, writeFiles } from "../../support/tempDir.js"
import { eventuallyEffect } from "../../support/waitFor.js"
import { runningAgent } from "./runningAgent.js"
import { wakeSourcesOver } from "./seed.js"
import { makeTestHost } from "./testHost.js"

const alice = { id: 42, first_name: "Alice" }
const bob = { id: 43, first_name: "Bob" }

/** An agent folder on the fake model whose bot is `telegram`'s (its token and root in its own `.env`). */
const botAgent = (baseURL: string, telegram: FakeTelegram) => {
  const dir = NodePath.join(makeTempDir(), "agent")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({ model: "m", baseURL, heartbeatInterval: 0, autoCommit: false, recall: false, timezone: "UTC" }),
    ".kern/.env": `TELEGRAM_BOT_TOKEN=${telegram.token}\nTELEGRAM_API_ROOT=${telegram.root}\n`
  })
  return dir
}

describe("the shared Telegram poller", () => {
  it.scopedLive("messages to two passive agents' bots wake both and both answer; a host killed between seeing an update and waking its agent loses nothing", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const botA = yield* makeFakeTelegram({ token: "111:bot-a" })
      const botB = yield* makeFakeTelegram({ token: "222:bot-b" })
      const agents = [{ name: "ada", dir: botAgent(model.baseURL, botA) }, { name: "bea", dir: botAgent(model.baseURL, botB) }]

      /** A host and its wake sources, in a scope of their own (closing it kills them: every fiber interrupted). */
      const startHost = (gate?: (name: string) => Effect.Effect<void>) =>
        Effect.gen(function*() {
          const scope = yield* Scope.make()
          yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
          const host = yield* Scope.extend(makeTestHost(agents, runningAgent, gate), scope)
          const sources = Context.get(yield* Layer.buildWithScope(wakeSourcesOver(host.layer), scope), WakeSources)
          return { host, sources, kill: Scope.close(scope, Exit.void) }
        })
      const runtimeOf = (host: { readonly contextOf: (name: string) => Effect.Effect<Option.Option<Context.Context<any>>> }, name: string) =>
        Effect.map(Effect.flatMap(host.contextOf(name), identity), (context) => Context.get(context, AgentRuntime))

      // The operator paired Alice with ada and Bob with bea while they ran; then they were passivated.
      const first = yield* startHost()
      for (const [name, user] of [["ada", alice], ["bea", bob]] as const) {
        yield* first.host.wake(name, "pairing")
        const context = yield* Effect.flatMap(first.host.contextOf(name), identity)
        const pairings = Context.get(context, PairingStore)
        const pairing = yield* pairings.request({ interface: "telegram", userId: String(user.id), chatId: String(user.id) })
        yield* pairings.approve(pairing.code, "operator")
        yield* first.host.passivate(name)
      }
      const polling = (n: number) => Effect.map(first.sources.status, (s) => s.passive === 2 && s.telegramPollers === n)
      expect(yield* eventuallyEffect(polling(2))).toBe(true)

      // A message to each bot: both agents wake and answer, each from its own bot.
      yield* model.reply(FakeReply.text("Hello Alice."), FakeReply.text("Hello Bob."))
      yield* botA.message({ from: alice, text: "hi ada" })
      yield* botB.message({ from: bob, text: "hi bea" })
      yield* botA.awaitChat(alice.id, (messages) => messages.some((m) => m.text.startsWith("Hello")))
      yield* botB.awaitChat(bob.id, (messages) => messages.some((m) => m.text.startsWith("Hello")))
      expect((yield* first.host.woken).filter((w) => w.reason.startsWith("telegram update")).map((w) => w.name).sort()).toEqual(["ada", "bea"])
      expect(yield* first.sources.status).toMatchObject({ passive: 0, telegramPollers: 0 })
      for (const name of ["ada", "bea"]) {
        expect(yield* eventuallyEffect(Effect.flatMap(runtimeOf(first.host, name), (runtime) => runtime.idle))).toBe(true)
        yield* first.host.passivate(name)
      }
      expect(yield* eventuallyEffect(polling(2))).toBe(true)
      // The host polls from the offset each agent stored, past what it answered: nothing wakes it again.
      const polls = yield* botA.awaitCalls("getUpdates", (yield* botA.calls("getUpdates")).length + 1)
      expect(polls.at(-1)!.body["offset"]).toBeGreaterThan(0)
      expect((yield* first.host.woken).length).toBe(4)
      yield* first.kill

      // A second host is killed after its poller saw an update for ada, as it wakes her.
      const reached = yield* Deferred.make<void>()
      const second = yield* startHost((name) => name === "ada" ? Effect.zipRight(Deferred.succeed(reached, undefined), Effect.never) : Effect.void)
      const updateId = yield* botA.message({ from: alice, text: "remember the milk" })
      yield* Deferred.await(reached)
      yield* second.kill
      // Nothing consumed it: Telegram still holds it.
      expect(yield* botA.unconfirmed).toContain(updateId)

      // The next host wakes ada for it and she answers it, once.
      yield* model.reply(FakeReply.text("Noted: milk."))
      const third = yield* startHost()
      yield* botA.awaitChat(alice.id, (messages) => messages.some((m) => m.text === "Noted: milk."))
      expect(yield* eventuallyEffect(Effect.flatMap(runtimeOf(third.host, "ada"), (runtime) => runtime.idle))).toBe(true)
      yield* third.host.passivate("ada")
      expect(yield* eventuallyEffect(Effect.map(third.sources.status, (s) => s.passive === 2 && s.telegramPollers === 2))).toBe(true)
      const after = yield* botA.awaitCalls("getUpdates", (yield* botA.calls("getUpdates")).length + 1)
      expect(after.at(-1)!.body["offset"]).toBe(updateId + 1)
      expect((yield* third.host.woken).map((w) => w.name)).toEqual(["ada"])
      expect((yield* botA.chat(alice.id)).filter((m) => m.text === "Noted: milk.").length).toBe(1)
      const milk = (yield* model.modelRequests).filter((r) => JSON.stringify(r.body).includes("remember the milk"))
      expect(milk.length).toBe(1)
    }), { timeout: 180_000 })
})
