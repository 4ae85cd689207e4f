import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as NodePath from "node:path"
import * as Database from "../../src/storage/Database.js"
import { ScheduleStore } from "../../src/tools/schedules/ScheduleStore.js"
import { initAgentFolder } from "../support/agentFolder.js"
import { runKernIn } from "../support/inProcessCli.js"
import { pairTelegramUsers } from "../support/pairedUsers.js"

// `kern schedule add|list|rm` on kern.db, with no agent running; `kern status` names the runs missed.

const Listed = Schema.Array(Schema.Struct({
  id: Schema.Number,
  kind: Schema.Literal("at", "cron", "heartbeat"),
  when: Schema.String,
  timezone: Schema.String,
  prompt: Schema.String,
  misfire: Schema.optional(Schema.String),
  deliverTo: Schema.optional(Schema.NullOr(Schema.String)),
  next: Schema.NullOr(Schema.String),
  nextDueMs: Schema.NullOr(Schema.Number),
  fired: Schema.optional(Schema.Number),
  missed: Schema.optional(Schema.Number)
}))

/** The stored schedules `kern schedule list --json` shows, after the heartbeat (id 0, listed first). */
const schedulesIn = (stdout: string) => {
  const [heartbeat, ...schedules] = Schema.decodeUnknownSync(Schema.parseJson(Listed))(stdout)
  expect(heartbeat).toMatchObject({ id: 0, kind: "heartbeat", when: "every 60 min", next: null })
  return schedules
}

const kern = async (...args: ReadonlyArray<string>) => runKernIn(args)

describe("kern schedule", () => {
  it.live("add (at, cron, deliver-to), list, rm; mistakes are refused with what was wrong", () =>
    Effect.promise(async () => {
      const dir = initAgentFolder(["--model", "m"], { timezone: "Europe/Berlin" })
      await pairTelegramUsers(dir, [{ userId: "555", displayName: "Alice" }])

      const oneShot = await kern("schedule", "add", "water the plants", dir, "--at", "in 3 days at 09:00", "--json")
      expect(oneShot.status, oneShot.stderr).toBe(0)
      const cron = await kern("schedule", "add", "morning brief", "--dir", dir, "--cron", "0 8 * * 1-5", "--deliver-to", "telegram:555")
      expect(cron.status, cron.stderr).toBe(0)
      expect(cron.stdout).toMatch(/^schedule 2 added: next \d{4}-\d{2}-\d{2}T08:00:00\+0[12]:00\n$/)

      const listed = await kern("schedule", "list", dir, "--json")
      expect(listed.status, listed.stderr).toBe(0)
      const [first, second] = schedulesIn(listed.stdout)
      expect(first).toMatchObject({ id: 1, kind: "at", timezone: "Europe/Berlin", prompt: "water the plants", misfire: "once", deliverTo: null, fired: 0, missed: 0 })
      expect(first!.next).toMatch(/T09:00:00\+0[12]:00$/)
      expect(first!.nextDueMs! - Date.now()).toBeGreaterThan(2 * 24 * 3600_000)
      expect(second).toMatchObject({ id: 2, kind: "cron", when: "0 8 * * 1-5", misfire: "skip", deliverTo: "telegram:555" })
      const table = await kern("schedule", "list", dir)
      expect(table.stdout).toContain("morning brief")
      expect(table.stdout).toContain("telegram:555")

      // Mistakes: what was wrong, exit 2 (usage) or 1 (a user that is not there), nothing added.
      const unreadable = await kern("schedule", "add", "x", dir, "--at", "next blue moon")
      expect(unreadable.status).toBe(2)
      expect(unreadable.stderr).toContain("at \"next blue moon\": not a time kern reads")
      const both = await kern("schedule", "add", "x", dir, "--at", "in 1 hour", "--cron", "* * * * *")
      expect(both.status).toBe(2)
      expect(both.stderr).toContain("exactly one of at")
      const badCron = await kern("schedule", "add", "x", dir, "--cron", "0 25 * * *")
      expect(badCron.status).toBe(2)
      expect(badCron.stderr).toContain("cron \"0 25 * * *\"")
      const badZone = await kern("schedule", "add", "x", dir, "--cron", "0 8 * * *", "--timezone", "Atlantis/Capital")
      expect(badZone.status).toBe(2)
      expect(badZone.stderr).toContain("not an IANA time zone")
      const stranger = await kern("schedule", "add", "x", dir, "--at", "in 1 hour", "--deliver-to", "telegram:999")
      expect(stranger.status).toBe(1)
      expect(stranger.stderr).toContain("--deliver-to: no user telegram:999")
      expect(schedulesIn((await kern("schedule", "list", dir, "--json")).stdout).length).toBe(2)

      const removed = await kern("schedule", "rm", "1", dir)
      expect(removed.status, removed.stderr).toBe(0)
      expect(removed.stdout).toBe("schedule 1 removed\n")
      const again = await kern("schedule", "rm", "1", dir)
      expect(again.status).toBe(1)
      expect(again.stderr).toContain("no schedule 1")
      expect(schedulesIn((await kern("schedule", "list", dir, "--json")).stdout).map((s) => s.id)).toEqual([2])
      const heartbeat = await kern("schedule", "rm", "0", dir)
      expect(heartbeat.status).toBe(1)
      expect(heartbeat.stderr).toContain("schedule 0 is the heartbeat: it is not removed like a schedule; to turn it off, set heartbeatInterval: 0")
      const listedTable = await kern("schedule", "list", dir)
      expect(listedTable.stdout).toContain("0 (heartbeat)")
      expect(listedTable.stdout).toContain("when the agent runs")
    }))

  it.live("runs missed while the agent was down show in kern schedule list and kern status", () =>
    Effect.promise(async () => {
      const dir = initAgentFolder(["--model", "m"], { timezone: "UTC" })
      expect((await kern("schedule", "add", "hourly", dir, "--cron", "0 * * * *")).status).toBe(0)
      // What the running agent's Scheduler records when it comes back after three hourly runs.
      const due = Date.UTC(2026, 0, 2, 10)
      await Effect.runPromise(
        Effect.flatMap(ScheduleStore, (store) =>
          Effect.flatMap(store.list, ([row]) =>
            store.settle(row!.id, row!.nextDueMs!, { fired: [], missed: [due, due + 3600_000, due + 7200_000] }, due + 3 * 3600_000))).pipe(
          Effect.provide(ScheduleStore.Default.pipe(Layer.provide(Database.layer({ filename: NodePath.join(dir, ".kern/kern.db") })))),
          Effect.scoped
        )
      )
      const listed = await kern("schedule", "list", dir)
      expect(listed.stdout).toContain("3 (last 2026-01-02T12:00:00+00:00)")
      const status = await kern("status", dir)
      // (Exit 1: the folder has no API key, a problem status lists; the schedules line is there all the same.)
      expect(status.stdout).toContain(
        "schedules: 1 (1 active); 3 runs missed while the agent was down, the last due 2026-01-02T12:00:00+00:00 (kern schedule list)"
      )
      const json = JSON.parse((await kern("status", dir, "--json")).stdout)
      expect(json.schedules).toEqual({ count: 1, active: 1, missed: 3, lastMissed: "2026-01-02T12:00:00+00:00" })
    }))
})
