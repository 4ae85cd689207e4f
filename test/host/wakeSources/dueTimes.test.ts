import { describe, expect, it } from "@effect/vitest"
import { Chunk, Context, Effect, identity, Layer, Option, TestClock } from "effect"
import { agentPaths } from "../../../src/config/paths.js"
import * as Database from "../../../src/storage/Database.js"
import { ScheduleStore } from "../../../src/tools/schedules/ScheduleStore.js"
import { AgentRuntime } from "../../../src/runtime/AgentRuntime.js"
import { FakeReply, make as makeFakeModel } from "../../support/fakeModelServer.js"
import { WakeSources } from "../../../src/host/wakeSources/wakeSources.js"
import { testAgentDir } from "../../support/testAgentDir.js"
import { eventuallyEffect } from "../../support/waitFor.js"
import { addSchedules, oneShot, recurring, wakeSourcesOver } from "./seed.js"
import { runningAgent } from "./runningAgent.js"
import { makeTestHost } from "./testHost.js"

const minute = 60_000
const agentCount = 100

describe("waking passive agents when they are due", () => {
  it.scoped("100 passive agents with schedules: one timer sleeps until the earliest, and each agent is woken once, when due", () =>
    Effect.gen(function*() {
      // Agent i has a one-shot due at i+1 minutes; every tenth also a cron whose next run is later.
      const agents = Array.from({ length: agentCount }, (_, i) => ({ name: `agent-${i}`, dir: testAgentDir() }))
      yield* Effect.forEach(agents, (agent, i) =>
        addSchedules(agent.dir, [
          oneShot((i + 1) * minute, `task ${i}`),
          ...(i % 10 === 0 ? [recurring("0 5 * * *", 5 * 60 * minute, `daily ${i}`)] : [])
        ]))
      // Nothing is woken by the host beyond recording it here: the agents stay "live" once woken.
      const host = yield* makeTestHost(agents, () => Layer.empty)
      const sources = Context.get(yield* Layer.build(wakeSourcesOver(host.layer)), WakeSources)

      const settled = Effect.map(sources.status, (s) => s.passive === agentCount && s.due === agentCount)
      expect(yield* eventuallyEffect(settled)).toBe(true)
      // One sleep for the whole host, until the earliest due time; no fiber or timer per agent. (The agents are read
      // in their order here, so the earliest never moves back and no sleep was made and dropped.)
      expect(Chunk.toReadonlyArray(yield* TestClock.sleeps())).toEqual([minute])
      expect((yield* sources.status).nextDueMs).toEqual(expect.objectContaining({ value: minute }))

      // Not a moment early.
      yield* TestClock.adjust(minute - 1)
      expect(yield* host.woken).toEqual([])
      yield* TestClock.adjust(1)
      expect(yield* eventuallyEffect(Effect.map(host.woken, (w) => w.length === 1))).toBe(true)
      expect((yield* host.woken)[0]).toEqual({ name: "agent-0", reason: "a schedule is due" })
      // Woken and live: the host forgets its due time (its own Scheduler keeps it now); the timer sleeps for the next.
      expect(yield* eventuallyEffect(Effect.map(TestClock.sleeps(), (s) => Chunk.toReadonlyArray(s).join() === String(2 * minute)))).toBe(true)

      // An hour and a half later, every agent was woken exactly once, in the order they came due.
      yield* TestClock.adjust((agentCount - 1) * minute)
      expect(yield* eventuallyEffect(Effect.map(host.woken, (w) => w.length === agentCount))).toBe(true)
      expect((yield* host.woken).map((w) => w.name)).toEqual(agents.map((a) => a.name))
      expect(yield* host.stateOf(`agent-${agentCount - 1}`)).toBe("live")
      expect(yield* sources.status).toMatchObject({ passive: 0, due: 0 })
      expect(Chunk.size(yield* TestClock.sleeps())).toBe(0)
    }), { timeout: 120_000 })
})

describe("a wake that fails", () => {
  it.scoped("is tried again after a backoff that grows (1 s, 2 s, 4 s), never at once in a loop as the agent is read again", () =>
    Effect.gen(function*() {
      const dir = testAgentDir()
      yield* addSchedules(dir, [oneShot(minute, "never runs")])
      // Every wake fails (its folder held elsewhere, say): the agent is passive again and read again, the run still due.
      const host = yield* makeTestHost([{ name: "stuck", dir }], () => Layer.fail("its folder is held by another kern start"))
      const sources = Context.get(yield* Layer.build(wakeSourcesOver(host.layer)), WakeSources)
      const nextDue = (ms: number) => Effect.map(sources.status, (s) => s.passive === 1 && Option.getOrNull(s.nextDueMs) === ms)
      expect(yield* eventuallyEffect(nextDue(minute))).toBe(true)
      const wakes = (n: number) => Effect.map(host.woken, (w) => w.length === n)

      yield* TestClock.adjust(minute)
      expect(yield* eventuallyEffect(wakes(1))).toBe(true)
      expect(yield* eventuallyEffect(nextDue(minute + 1_000))).toBe(true)
      yield* TestClock.adjust(999)
      expect(yield* host.woken).toHaveLength(1)
      yield* TestClock.adjust(1)
      expect(yield* eventuallyEffect(wakes(2))).toBe(true)
      expect(yield* eventuallyEffect(nextDue(minute + 3_000))).toBe(true)
      yield* TestClock.adjust(1_999)
      expect(yield* host.woken).toHaveLength(2)
      yield* TestClock.adjust(1)
      expect(yield* eventuallyEffect(wakes(3))).toBe(true)
      expect(yield* eventuallyEffect(nextDue(minute + 7_000))).toBe(true)
      expect(yield* host.woken).toHaveLength(3)
      expect(yield* host.stateOf("stuck")).toBe("passive")
    }))
})

describe("a passive agent's schedules, end to end", () => {
  it.scoped("a run due while passive wakes the agent and its own Scheduler fires it once; passivated again, it is woken for the next run only", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const dir = testAgentDir({ baseURL: model.baseURL })
      yield* addSchedules(dir, [oneShot(10 * minute, "water the plants"), recurring("0 * * * *", 60 * minute, "hourly check")])
      const host = yield* makeTestHost([{ name: "gardener", dir }], runningAgent)
      const sources = Context.get(yield* Layer.build(wakeSourcesOver(host.layer)), WakeSources)
      const nextDue = (ms: number) => Effect.map(sources.status, (s) => s.passive === 1 && Option.getOrNull(s.nextDueMs) === ms)
      expect(yield* eventuallyEffect(nextDue(10 * minute))).toBe(true)

      /** Waits for the agent's turns to end, then passivates it (as the host does after idleSeconds). */
      const idleThenPassivate = Effect.gen(function*() {
        const context = yield* Effect.flatMap(host.contextOf("gardener"), identity)
        const runtime = Context.get(context, AgentRuntime)
        expect(yield* eventuallyEffect(runtime.idle)).toBe(true)
        yield* host.passivate("gardener")
      })
      const prompts = Effect.map(model.modelRequests, (all) => all.map((r) => JSON.stringify(r.body)))

      yield* model.reply(FakeReply.text("Watered."))
      yield* TestClock.adjust(10 * minute)
      expect(yield* eventuallyEffect(Effect.map(prompts, (all) => all.length === 1))).toBe(true)
      expect((yield* prompts)[0]).toContain("water the plants")
      expect(yield* host.woken).toEqual([{ name: "gardener", reason: "a schedule is due" }])
      yield* idleThenPassivate

      // Read again once passive: the one-shot is done, the hourly run is next.
      expect(yield* eventuallyEffect(nextDue(60 * minute))).toBe(true)
      yield* model.reply(FakeReply.text("All fine."))
      yield* TestClock.adjust(50 * minute)
      expect(yield* eventuallyEffect(Effect.map(prompts, (all) => all.length === 2))).toBe(true)
      expect((yield* prompts)[1]).toContain("hourly check")
      yield* idleThenPassivate
      expect(yield* eventuallyEffect(nextDue(120 * minute))).toBe(true)

      // Each run fired once, recorded once; the one-shot never again.
      expect((yield* host.woken).length).toBe(2)
      const runs = yield* Effect.flatMap(ScheduleStore, (store) => store.list).pipe(
        Effect.provide(ScheduleStore.Default.pipe(Layer.provide(Database.layer({ filename: agentPaths(dir).dbFile }))))
      )
      expect(runs.map((r) => ({ prompt: r.prompt, fired: r.fired, missed: r.missed, nextDueMs: r.nextDueMs }))).toEqual([
        { prompt: "water the plants", fired: 1, missed: 0, nextDueMs: null },
        { prompt: "hourly check", fired: 1, missed: 0, nextDueMs: 120 * minute }
      ])
    }), { timeout: 120_000 })
})
