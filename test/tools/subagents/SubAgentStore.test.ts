import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import { subagentInterface } from "../../../src/kernel/Audience.js"
import { type NewSubAgent, SubAgentStore } from "../../../src/tools/subagents/SubAgentStore.js"
import { databases } from "../../support/databases.js"

// The sub-agents' repository on both databases: the stored terms (JSON columns) read back as given, one ender wins,
// a turn's spend added to what was used (JSON arithmetic spelled per database), the children counted.

const spawned = (task: string, parent: { readonly interface: string; readonly channel: string } = { interface: "web", channel: "web" }): NewSubAgent => ({
  task,
  parentInterface: parent.interface,
  parentChannel: parent.channel,
  parentUserId: "operator",
  parentSessionId: "s1",
  approver: { interface: "web", channel: "web", userId: "operator" },
  depth: parent.interface === subagentInterface ? 2 : 1,
  tools: ["read", "grep", "mcp.files.search"],
  toolScope: null,
  audience: { conversationId: "main", interface: "web", channel: "web", userId: "operator", memory: "all" },
  budget: { maxToolCalls: 20, maxPromptTokens: 200_000, maxCostUsdCents: 12.5, maxLatencyMs: 300_000 }
})

describe.each(databases)("the sub-agent store on $dialect", ({ layer }) => {
  const storeLayer = SubAgentStore.Default.pipe(Layer.provide(layer))

  it.effect("stores a sub-agent's terms and reads them back as given; of two enders one wins", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_795_000_000_000)
      const store = yield* SubAgentStore
      const created = yield* store.create(spawned("find the flaky test"))
      const read = Option.getOrThrow(yield* store.get(created.id))
      expect(read).toEqual(created)
      expect(read).toMatchObject({ state: "running", used: { toolCalls: 0, promptTokens: 0, costUsdCents: 0 }, createdAtMs: 1_795_000_000_000 })
      const scoped = yield* store.create({ ...spawned("read the docs"), toolScope: "read", audience: null })
      expect(Option.getOrThrow(yield* store.get(scoped.id))).toMatchObject({ toolScope: "read", audience: null })
      expect((yield* store.running).map((row) => row.id)).toEqual([created.id, scoped.id])

      yield* TestClock.adjust(5_000)
      expect(yield* store.end(created.id, "done", "It is test/flaky.test.ts.")).toBe(true)
      expect(yield* store.end(created.id, "cancelled", "cancelled by the operator")).toBe(false)
      expect(Option.getOrThrow(yield* store.get(created.id))).toMatchObject({ state: "done", outcome: "It is test/flaky.test.ts.", endedAtMs: 1_795_000_005_000 })
      expect((yield* store.running).map((row) => row.id)).toEqual([scoped.id])
      expect((yield* store.recent(1)).map((row) => row.id)).toEqual([scoped.id])
      expect(Option.isNone(yield* store.get(987_654))).toBe(true)
    }).pipe(Effect.provide(storeLayer)))

  it.effect("adds each turn's spend to what it used, fractions of a cent kept", () =>
    Effect.gen(function*() {
      const store = yield* SubAgentStore
      const { id } = yield* store.create(spawned("summarize the logs"))
      yield* store.addUsage(id, { toolCalls: 3, promptTokens: 12_000, costUsdCents: 0.25 })
      yield* store.addUsage(id, { toolCalls: 2, promptTokens: 9_000, costUsdCents: 1.5 })
      expect(Option.getOrThrow(yield* store.get(id)).used).toEqual({ toolCalls: 5, promptTokens: 21_000, costUsdCents: 1.75 })
    }).pipe(Effect.provide(storeLayer)))

  it.effect("counts a sub-agent's running children and those that reported to it", () =>
    Effect.gen(function*() {
      const store = yield* SubAgentStore
      const parent = yield* store.create(spawned("plan the release"))
      const under = { interface: subagentInterface, channel: String(parent.id) }
      const [a, b, c] = yield* Effect.all([store.create(spawned("a", under)), store.create(spawned("b", under)), store.create(spawned("c", under))])
      yield* store.create(spawned("elsewhere", { interface: subagentInterface, channel: "999" }))
      expect(yield* store.runningChildren(parent.id)).toBe(3)
      yield* store.end(a!.id, "done", "ok")
      yield* store.end(b!.id, "cancelled", "cancelled")
      expect(yield* store.runningChildren(parent.id)).toBe(1)
      expect(yield* store.reportedChildren(parent.id)).toBe(1)
      yield* store.end(c!.id, "interrupted", "the agent stopped")
      expect(yield* store.reportedChildren(parent.id)).toBe(2)
    }).pipe(Effect.provide(storeLayer)))
})
