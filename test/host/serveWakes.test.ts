import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { agentPaths } from "../../src/config/paths.js"
import { HeartbeatLog } from "../../src/runtime/HeartbeatLog.js"
import * as Database from "../../src/storage/Database.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import * as FakeSlack from "../support/fakeSlack.js"
import { FakeReply, make as makeFakeModel } from "../support/fakeModelServer.js"
import { make as makeFakeTelegram } from "../support/fakeTelegram.js"
import { envValue, startHost } from "../support/hostServe.js"
import { pairTelegramUsers } from "../support/pairedUsers.js"
import { makeTempDir } from "../support/tempDir.js"
import { eventually, eventuallyEffect } from "../support/waitFor.js"
import { addSchedules, oneShot } from "./wakeSources/seed.js"

const alice = { id: 42, first_name: "Alice" }

interface HostView {
  readonly agents: Record<string, { readonly state: string; readonly keptLive?: string }>
  readonly host: {
    readonly wakeSources: { readonly passive: number; readonly due: number; readonly nextDue: string | null; readonly telegramPollers: number }
    readonly keptLive: ReadonlyArray<{ readonly name: string; readonly why: string }>
  }
}

/** `GET /agents` and `GET /host` with the host token. */
const view = (origin: string, token: string): Effect.Effect<HostView> =>
  Effect.promise(async () => {
    const get = (path: string) => fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json())
    const agents = (await get("/agents")) as { agents: Array<{ name: string; state: string; keptLive?: string }> }
    return { agents: Object.fromEntries(agents.agents.map((a) => [a.name, a])), host: (await get("/host")) as HostView["host"] }
  })

/** How often `line` is in the host's log (its stderr). */
const times = (log: string, line: string) => log.split("\n").filter((l) => l.includes(line)).length

/** The heartbeat's record in the folder's kern.db (opened briefly, as a passive agent's is), or a change to it. */
const withHeartbeatLog = <A, E>(dir: string, f: (log: HeartbeatLog) => Effect.Effect<A, E>) =>
  Effect.flatMap(HeartbeatLog, f).pipe(
    Effect.provide(HeartbeatLog.Default.pipe(Layer.provide(Database.layer({ filename: agentPaths(dir).dbFile })))),
    Effect.orDie
  )

const appendEnv = (dir: string, lines: Record<string, string>) =>
  NodeFs.appendFileSync(NodePath.join(dir, ".kern/.env"), Object.entries(lines).map(([k, v]) => `\n${k}=${v}`).join("") + "\n")

describe("kern serve wakes passive agents", () => {
  it.live("a schedule due and a Telegram message wake their agent, which answers once and is passivated again; an agent with neither stays passive; a Slack agent is kept live", () =>
    Effect.scoped(Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram({ token: "333:bot-tg" })
      const slack = yield* FakeSlack.make()
      const settings = { heartbeatInterval: 0, autoCommit: false, recall: false }
      const sched = initAgentWithModel(model.baseURL, settings)
      const tg = initAgentWithModel(model.baseURL, settings)
      const quiet = initAgentWithModel(model.baseURL, settings)
      const sl = initAgentWithModel(model.baseURL, settings)
      const hb = initAgentWithModel(model.baseURL, { ...settings, heartbeatInterval: 60 })
      appendEnv(tg, { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.root })
      appendEnv(sl, { SLACK_BOT_TOKEN: slack.botToken, SLACK_APP_TOKEN: slack.appToken, SLACK_API_URL: slack.apiUrl })
      yield* Effect.promise(() => pairTelegramUsers(tg, [{ userId: String(alice.id), displayName: "Alice" }]))
      // The operator added a run for a few seconds from now while the agent was not running (kern schedule add).
      yield* addSchedules(sched, [oneShot(Date.now() + 5_000, "Water the plants.")])
      yield* model.reply(FakeReply.text("Watered."))
      // Its last heartbeat (in an earlier run) saw everything, and its next one is due in a few seconds.
      yield* withHeartbeatLog(hb, (log) => Effect.zipRight(log.setPendingActivity(false), log.setNext(Date.now() + 5_000)))

      const home = makeTempDir()
      const config = NodePath.join(home, "host.json")
      NodeFs.writeFileSync(config, JSON.stringify({ agents: { sched, tg, quiet, sl, hb }, port: 0, idleSeconds: 2 }))
      const host = yield* startHost(config, { OPENROUTER_API_KEY: "sk-test" })
      const tokenFile = NodePath.join(home, ".kern-host/.env")
      expect(yield* eventually(() => (envValue(tokenFile, "KERN_HOST_TOKEN") ?? "") !== ""), host.stderr()).toBe(true)
      const token = envValue(tokenFile, "KERN_HOST_TOKEN")!
      const look = view(host.origin, token)
      // Requests whose last user message is a heartbeat's (the system prompt mentions heartbeats too).
      const heartbeatPrompts = Effect.map(model.modelRequests, (all) =>
        all.filter((r) => {
          const messages = (r.body as { messages?: ReadonlyArray<{ role: string; content: unknown }> }).messages ?? []
          return JSON.stringify(messages.filter((m) => m.role === "user").at(-1)?.content ?? "").includes("[heartbeat]")
        }).length)
      const prompts = (text: string) => Effect.map(model.modelRequests, (all) => all.filter((r) => JSON.stringify(r.body).includes(text)).length)

      // (a) The schedule wakes its agent; its own Scheduler fires the run once; idle, it is passivated again.
      expect(yield* eventuallyEffect(Effect.map(prompts("Water the plants."), (n) => n === 1)), host.stderr()).toBe(true)
      expect(yield* eventually(() => times(host.stderr(), "agent sched: passivating (idle)") === 1), host.stderr()).toBe(true)
      expect(times(host.stderr(), "agent sched: waking (a schedule is due)")).toBe(1)
      expect(yield* eventuallyEffect(Effect.map(look, (v) => v.agents["sched"]?.state === "passive")), host.stderr()).toBe(true)
      expect(yield* prompts("Water the plants.")).toBe(1)

      // The heartbeat wakes its agent, whose tick knows from kern.db that nothing happened since the last: no model call.
      expect(yield* eventually(() => times(host.stderr(), "agent hb: passivating (idle)") >= 1), host.stderr()).toBe(true)
      expect(times(host.stderr(), "agent hb: waking (the heartbeat is due)")).toBeGreaterThanOrEqual(1)
      expect(yield* eventuallyEffect(Effect.map(look, (v) => v.agents["hb"]?.state === "passive")), host.stderr()).toBe(true)
      expect(yield* withHeartbeatLog(hb, (log) => log.state)).toMatchObject({ outcome: "skipped", reason: "nothing happened since the last heartbeat" })
      expect(yield* heartbeatPrompts).toBe(0)

      // (b) Telegram: the host polls the passive agent's bot; a message wakes it, it answers once, and is passivated.
      expect(yield* eventuallyEffect(Effect.map(look, (v) => v.agents["tg"]?.state === "passive" && v.host.wakeSources.telegramPollers === 1)), host.stderr())
        .toBe(true)
      yield* model.reply(FakeReply.text("Hello Alice."))
      yield* telegram.message({ from: alice, text: "are you there, tg?" })
      yield* telegram.awaitChat(alice.id, (messages) => messages.some((m) => m.text === "Hello Alice."))
      expect(yield* eventually(() => times(host.stderr(), "agent tg: passivating (idle)") === 1), host.stderr()).toBe(true)
      // Back to sleep, its bot polled again from the offset it stored: the update answered wakes nothing more.
      expect(yield* eventuallyEffect(Effect.map(look, (v) => v.agents["tg"]?.state === "passive" && v.host.wakeSources.telegramPollers === 1)), host.stderr())
        .toBe(true)
      const polls = (yield* telegram.calls("getUpdates")).length
      yield* telegram.awaitCalls("getUpdates", polls + 1)
      expect(yield* telegram.unconfirmed).toEqual([])
      expect((yield* telegram.chat(alice.id)).filter((m) => m.text === "Hello Alice.")).toHaveLength(1)
      expect(yield* prompts("are you there, tg?")).toBe(1)
      expect(times(host.stderr(), "agent tg: waking (telegram update")).toBe(1)

      // Slack: woken at the start and kept live (Socket Mode reaches only a connected app), through the idle sweeps that
      // passivated the others; a DM now still reaches it (a stranger gets a pairing code, nothing for the model).
      const now = yield* look
      expect(now.agents["sl"]).toMatchObject({ state: "live", keptLive: expect.stringContaining("Slack") })
      expect(now.host.keptLive.map((k) => k.name)).toEqual(["sl"])
      expect(times(host.stderr(), "agent sl: kept live, never passivated")).toBe(1)
      expect(times(host.stderr(), "agent sl: passivating")).toBe(0)
      yield* slack.awaitConnections(1)
      const before = (yield* model.modelRequests).length
      yield* slack.dm("U9", "hi from slack")
      const code = yield* slack.awaitCall("chat.postMessage", (call) => String(call.body["text"]).includes("kern pair KERN-"))
      expect(code.body).toMatchObject({ channel: "DU9" })
      expect((yield* model.modelRequests).length).toBe(before)

      // (c) Nothing wakes an agent with no schedule, heartbeat or bot: it was never woken, its folder never held.
      expect(now.agents["quiet"]?.state).toBe("passive")
      expect(times(host.stderr(), "agent quiet:")).toBe(0)
      expect(NodeFs.existsSync(NodePath.join(quiet, ".kern/agent.lock"))).toBe(false)
      // Watched while passive: the four asleep; only the heartbeat is due.
      expect(now.host.wakeSources).toMatchObject({ passive: 4, due: 1, telegramPollers: 1 })

      host.child()?.kill("SIGTERM")
      const result = yield* Fiber.join(host.exited)
      expect(result.status, result.stderr).toBe(0)
    })))
})
