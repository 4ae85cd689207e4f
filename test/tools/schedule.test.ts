import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ScheduleStore } from "../../src/tools/schedules/ScheduleStore.js"
import { PairingStore } from "../../src/users/PairingStore.js"
import { startServer } from "../channels/web/harness.js"
import { FakeReply } from "../support/fakeModelServer.js"
import { agentDatabaseConfig, agentSql, databases } from "../support/databases.js"
import { toolResultsById } from "../support/modelRequests.js"

// The schedule tool through the running agent: who may deliver where, what each conversation sees, and a firing
// that comes back as a turn with its prompt.

/** The agent's kern.db where its config puts it (SQLite or its PostgreSQL schema), opened beside the running agent. */
const onDb = (dir: string) =>
  Layer.merge(PairingStore.Default, ScheduleStore.Default).pipe(
    Layer.provide(agentSql(dir)),
    Layer.orDie
  )

describe.each(databases)("the schedule tool on $dialect", (database) => {
  it.live("a paired user schedules for their own chat only; the operator delivers to anyone paired; a firing is a turn", () =>
    Effect.scoped(Effect.gen(function*() {
      const { dir, model, runtime } = yield* startServer({
        config: { recall: false, timezone: "UTC", heartbeatInterval: 240, ...(yield* agentDatabaseConfig(database)) }
      })
      yield* Effect.gen(function*() {
        const store = yield* PairingStore
        const alice = yield* store.request({ interface: "telegram", userId: "42", chatId: "9042", displayName: "Alice" })
        yield* store.approve(alice.code, "operator")
        yield* store.setScope("telegram:42", "write")
        const bob = yield* store.request({ interface: "telegram", userId: "77", chatId: "9077", displayName: "Bob" })
        yield* store.approve(bob.code, "operator")
      }).pipe(Effect.provide(onDb(dir)))

      // Alice, in her own chat, with a write scope.
      yield* model.reply(
        FakeReply.toolCalls([
          { id: "a1", name: "schedule", args: { action: "add", at: "in 2 days at 09:00", prompt: "remind Bob", deliverTo: "telegram:77" } },
          { id: "a2", name: "schedule", args: { action: "add", at: "in 2 days at 09:00", prompt: "remind me", deliverTo: "telegram:42" } },
          { id: "a3", name: "schedule", args: { action: "add", cron: "0 8 * * *", prompt: "my brief" } },
          { id: "a4", name: "schedule", args: { action: "add", at: "whenever", prompt: "x" } }
        ]),
        FakeReply.text("done")
      )
      yield* runtime.submit({ interface: "telegram", channel: "9042", userId: "42", text: "schedule things" })
      const [, aliceSecond] = yield* model.awaitRequests(2)
      const alice = toolResultsById(aliceSecond!.body)
      expect(alice.a1).toContain("PERMISSION_DENIED")
      expect(alice.a1).toContain("may deliver only to this chat (telegram 9042), not telegram:77")
      expect(alice.a2).toContain("\"deliverTo\": \"telegram:42\"")
      expect(alice.a3).toContain("\"misfire\": \"skip\"")
      expect(alice.a4).toContain("VALIDATION_ERROR")
      expect(alice.a4).toContain("not a time kern reads")

      // The operator, on the web: delivers to Bob, sees every schedule; a schedule due in a moment fires.
      const soon = new Date(Date.now() + 1500).toISOString()
      yield* model.reply(
        FakeReply.toolCalls([
          { id: "o1", name: "schedule", args: { action: "add", cron: "30 7 * * 1-5", prompt: "brief Bob", deliverTo: "telegram:77" } },
          { id: "o2", name: "schedule", args: { action: "add", at: soon, prompt: "ping from the schedule" } },
          { id: "o3", name: "schedule", args: { action: "list" } },
          { id: "o4", name: "schedule", args: { action: "remove", id: 0 } }
        ]),
        FakeReply.text("scheduled"),
        FakeReply.text("pong")
      )
      yield* runtime.submit({ interface: "web", channel: "web", userId: "operator", text: "schedule for bob" })
      const requests = yield* model.awaitRequests(5)
      const operator = toolResultsById(requests[3]!.body)
      expect(operator.o1).toContain("\"deliverTo\": \"telegram:77\"")
      // Alice's schedule is in the operator's listing. o1 runs beside the listing (on PostgreSQL on a connection of its
      // own), so whether the listing already holds "brief Bob" is not fixed; the rows below hold it.
      expect(operator.o3).toContain("remind me")
      // The operator's conversation sees the heartbeat among the schedules (id 0), and may not remove it.
      expect(operator.o3).toContain("\"kind\": \"heartbeat\"")
      expect(operator.o3).toContain("every 240 min")
      expect(operator.o4).toContain("PERMISSION_DENIED")
      expect(operator.o4).toContain("set heartbeatInterval: 0 in .kern/config.json")
      const fired = JSON.stringify(requests[4]!.body)
      expect(fired).toContain("ping from the schedule")
      expect(fired).toMatch(/\[schedule \d+, due /)

      // Alice lists hers only; removing the operator's is not hers to do.
      yield* model.reply(
        FakeReply.toolCalls([
          { id: "l1", name: "schedule", args: { action: "list" } },
          { id: "l2", name: "schedule", args: { action: "remove", id: 3 } }
        ]),
        FakeReply.text("ok")
      )
      yield* runtime.submit({ interface: "telegram", channel: "9042", userId: "42", text: "what is scheduled?" })
      const again = toolResultsById((yield* model.awaitRequests(7))[6]!.body)
      expect(again.l1).toContain("remind me")
      expect(again.l1).not.toContain("brief Bob")
      expect(again.l1).not.toContain("heartbeat")
      expect(again.l2).toContain("NOT_FOUND")

      const rows = yield* Effect.flatMap(ScheduleStore, (store) => store.list).pipe(Effect.provide(onDb(dir)))
      // A step's tool calls run side by side: which of them took which id is not fixed.
      expect(rows.map((r) => [r.prompt, r.createdBy, r.originInterface, r.originChannel, r.originUserId, r.deliverTo]).toSorted()).toEqual([
        ["brief Bob", "operator", "telegram", "9077", "operator", "telegram:77"],
        ["my brief", "telegram:42", "telegram", "9042", "42", null],
        ["ping from the schedule", "operator", "web", "web", "operator", null],
        ["remind me", "telegram:42", "telegram", "9042", "42", "telegram:42"]
      ])
      expect(rows.find((r) => r.prompt === "ping from the schedule")).toMatchObject({ fired: 1, nextDueMs: null })
    })), 120_000)
})
