import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { initAgentWithModel } from "../support/agentFolder.js"
import { agentSql } from "../support/databases.js"
import { FakeReply, make as makeFakeModel } from "../support/fakeModelServer.js"
import { make as makeFakeTelegram } from "../support/fakeTelegram.js"
import { envValue, lockRunner, runnerAgentConfig, startRunner } from "../support/hostServe.js"
import { pairTelegramUsers } from "../support/pairedUsers.js"
import { shardLocksHeld, startPostgres } from "../support/postgres.js"
import { eventually, eventuallyEffect } from "../support/waitFor.js"

// Two real `kern serve` runners on one throwaway PostgreSQL server share an agent with a Telegram bot: no runner's
// shared poller polls its bot (Telegram allows one poller per bot); it is kept live on the one runner the cluster
// holds it on, whose own channel polls. After kill -9 of that runner the survivor takes it live by itself, with no
// request, and Telegram messages are answered once each, the bot polled by one process at a time throughout.

const alice = { id: 42, first_name: "Alice" }

/** How often `line` is in a host's log (its stderr). */
const times = (log: string, line: string) => log.split("\n").filter((l) => l.includes(line)).length

/** `GET /agents` of a runner with its host token: each agent's state and why it is kept live. */
const agentsOf = (origin: string, token: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${origin}/agents`, { headers: { authorization: `Bearer ${token}` } })
    const body = (await response.json()) as { agents: Array<{ name: string; state: string; keptLive?: string }> }
    return Object.fromEntries(body.agents.map((a) => [a.name, a]))
  })

describe("kern serve: runners sharing a Telegram agent on PostgreSQL", () => {
  it.live("the agent is kept live on one runner, its bot polled by one process at a time; after kill -9 of it the survivor takes it live by itself; each message answered once", () =>
    Effect.scoped(Effect.gen(function*() {
      const pg = yield* startPostgres
      const url = Redacted.value(pg.url)
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram({ token: "444:bot-runners" })
      const dir = initAgentWithModel(model.baseURL, runnerAgentConfig(url, "kern_tg"))
      NodeFs.appendFileSync(NodePath.join(dir, ".kern/.env"), `\nTELEGRAM_BOT_TOKEN=${telegram.token}\nTELEGRAM_API_ROOT=${telegram.root}\n`)
      yield* Effect.promise(() => pairTelegramUsers(dir, [{ userId: String(alice.id), displayName: "Alice" }], agentSql(dir)))

      const runner = (label: string) =>
        Effect.gen(function*() {
          // Passivated at once if it could be: it is kept live instead.
          const { home, host, address } = yield* startRunner(label, { agents: { tg: dir }, url, idleSeconds: 1, env: { OPENROUTER_API_KEY: "sk-test" } })
          const tokenFile = NodePath.join(home, ".kern-host/.env")
          expect(yield* eventually(() => (envValue(tokenFile, "KERN_HOST_TOKEN") ?? "") !== ""), host.stderr()).toBe(true)
          return { host, address, token: envValue(tokenFile, "KERN_HOST_TOKEN")! }
        })
      const a = yield* runner("a")
      const b = yield* runner("b")
      const output = () => `--- a\n${a.host.stderr()}\n--- b\n${b.host.stderr()}`
      // Both runners joined: the shards' advisory locks are held by two connections between them.
      expect(yield* eventuallyEffect(shardLocksHeld(pg.url, 2, 16), 60_000), output()).toBe(true)

      // With no request, the runner holding the agent's shard wakes it and keeps it live; its folder is held there.
      // (The runner that started first held every shard until the other joined: the agent may have moved once.)
      const settled = Effect.gen(function*() {
        const onA = (yield* agentsOf(a.host.origin, a.token))["tg"]
        const onB = (yield* agentsOf(b.host.origin, b.token))["tg"]
        const live = [onA?.state === "live" ? a : undefined, onB?.state === "live" ? b : undefined].filter((r) => r !== undefined)
        return live.length === 1 && [onA?.state, onB?.state].includes("passive") && lockRunner(dir) === live[0]!.address
      })
      expect(yield* eventuallyEffect(settled, 60_000), output()).toBe(true)
      const [holder, survivor] = lockRunner(dir) === a.address ? [a, b] : [b, a]
      const held = yield* agentsOf(holder.host.origin, holder.token)
      expect(held["tg"], output()).toMatchObject({ state: "live", keptLive: expect.stringContaining("Telegram") })
      const wokenBefore = { holder: times(holder.host.stderr(), "agent tg: waking"), survivor: times(survivor.host.stderr(), "agent tg: waking") }

      /** Model requests asking about `text`: whose last user message carries it (a later turn has it in its history). */
      const prompts = (text: string) =>
        Effect.map(model.modelRequests, (all) =>
          all.filter((r) => {
            const body = r.body as { input?: ReadonlyArray<unknown>; messages?: ReadonlyArray<unknown> }
            const last = [...(body.input ?? body.messages ?? [])].reverse().find((m) => JSON.stringify(m).includes("\"user\""))
            return JSON.stringify(last ?? "").includes(text)
          }).length)
      /** A Telegram message to the bot: answered once, by one model request. */
      const message = (text: string, answer: string) =>
        Effect.gen(function*() {
          yield* model.reply(FakeReply.text(answer))
          yield* telegram.message({ from: alice, text })
          expect(yield* eventuallyEffect(Effect.map(telegram.chat(alice.id), (m) => m.some((x) => x.text === answer)), 120_000), output()).toBe(true)
          expect(yield* eventuallyEffect(Effect.map(telegram.unconfirmed, (ids) => ids.length === 0), 60_000), output()).toBe(true)
          expect(yield* prompts(text)).toBe(1)
          expect((yield* telegram.chat(alice.id)).filter((m) => m.text === answer)).toHaveLength(1)
        })
      yield* message("hello from telegram, first", "First answer.")
      // Through the idle sweeps (idleSeconds 1): still live, never passivated; polled meanwhile by its own channel only.
      const polls = (yield* telegram.calls("getUpdates")).length
      yield* telegram.awaitCalls("getUpdates", polls + 2)
      expect(times(holder.host.stderr(), "agent tg: passivating") + times(survivor.host.stderr(), "agent tg: passivating"), output()).toBe(0)
      expect(times(holder.host.stderr(), "agent tg: waking"), output()).toBe(wokenBefore.holder)
      expect(times(holder.host.stderr(), "agent tg: kept live, never passivated: Telegram"), output()).toBeGreaterThanOrEqual(1)
      expect(times(survivor.host.stderr(), "agent tg: waking"), output()).toBe(wokenBefore.survivor)
      expect((yield* agentsOf(survivor.host.origin, survivor.token))["tg"]?.state).toBe("passive")

      // kill -9 of the holder: the survivor takes the agent live by itself once the holder's locks expire.
      holder.host.child()?.kill("SIGKILL")
      expect(yield* eventually(() => lockRunner(dir) === survivor.address, 120_000), output()).toBe(true)
      expect(yield* eventuallyEffect(Effect.map(agentsOf(survivor.host.origin, survivor.token), (all) => all["tg"]?.state === "live"), 60_000), output())
        .toBe(true)
      expect(times(survivor.host.stderr(), "agent tg: waking"), output()).toBe(wokenBefore.survivor + 1)
      yield* message("hello from telegram, second", "Second answer.")

      // One poller at a time, throughout: no getUpdates ever arrived while another was held (Telegram's 409).
      expect(yield* telegram.overlappingPolls, output()).toEqual([])
      expect(yield* prompts("hello from telegram, first")).toBe(1)
    })), 400_000)
})
