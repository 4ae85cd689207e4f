import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodePath from "node:path"
import { localIso } from "../../../src/session/envelope.js"
import * as Database from "../../../src/storage/Database.js"
import { ScheduleStore } from "../../../src/tools/schedules/ScheduleStore.js"
import { screenshot } from "../../support/browser.js"
import { testDist } from "../../support/build.js"
import { bearer, request, startServer } from "./harness.js"
import { loggedInPage, pageErrors } from "./uiPage.js"

// The Schedules view against the real server (GET, POST, DELETE /schedules on a real kern.db), in real headless
// Chromium: the operator adds a schedule and sees it listed with its next run, sees the server's words when it refuses
// one, sees runs fired and missed, and removes one after saying yes.

const use = <A>(f: () => Promise<A>) => Effect.promise(f)

const zone = "Europe/Berlin"
const prompt = "Check the restic backups and tell me if any failed."
// Mon 23 and Tue 24 November 2026, 07:30 in Berlin (CET, UTC+1).
const missedDue = Date.UTC(2026, 10, 23, 6, 30)
const firedDue = Date.UTC(2026, 10, 24, 6, 30)

describe("web UI: the Schedules view", () => {
  it.live("adds a cron schedule, shows a refused cron's error, lists runs fired and missed, removes one on confirmation", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* startServer({ webRoot: NodePath.join(testDist, "web"), config: { recall: false, timezone: "UTC" } })
      const listed = Effect.map(
        request(`${server.base}/schedules`, { headers: bearer }),
        (r) => (r.json as { schedules: ReadonlyArray<{ id: number; when: string; timezone: string; nextDueMs: number | null }> }).schedules
      )
      const { page, errors } = yield* loggedInPage(server.base)
      const dialog = page.getByRole("dialog", { name: "Schedules" })
      const form = dialog.getByRole("form", { name: "Add a schedule" })
      yield* use(async () => {
        await page.getByRole("button", { name: "Schedules", exact: true }).click()
        await dialog.getByText("No schedules yet", { exact: false }).waitFor()
        // The prompt field has the focus: the operator types at once.
        expect(await page.evaluate("document.activeElement?.getAttribute('placeholder')")).toBe("What the agent is to do when it fires")

        await form.getByLabel("on a cron schedule").check()
        await form.getByLabel("Cron", { exact: true }).fill("61 7 * * 1-5")
        await form.getByLabel("Prompt").fill(prompt)
        await form.getByLabel("Timezone").fill(zone)
        await form.getByRole("button", { name: "Add schedule" }).click()
        // The server's own words, naming the expression it could not read.
        const refused = form.getByRole("alert")
        await refused.waitFor()
        expect(await refused.textContent()).toMatch(/^cron "61 7 \* \* 1-5": .+ \(400\)$/)
        // Nothing was added, and what was typed stays to be corrected.
        expect(await form.getByLabel("Prompt").inputValue()).toBe(prompt)
        expect(await dialog.locator(".schedule").count()).toBe(0)
      })
      expect(yield* listed).toEqual([])

      yield* use(async () => {
        await form.getByLabel("Cron", { exact: true }).fill("30 7 * * 1-5")
        await form.getByRole("button", { name: "Add schedule" }).click()
        await dialog.getByRole("status").filter({ hasText: "Added schedule 1" }).waitFor()
        await form.getByRole("alert").waitFor({ state: "detached" })
      })
      const [stored] = yield* listed
      expect(stored).toMatchObject({ id: 1, when: "30 7 * * 1-5", timezone: zone })
      const nextDueMs = stored?.nextDueMs ?? 0
      expect(nextDueMs).toBeGreaterThan(0)

      const item = dialog.getByRole("listitem", { name: "Schedule 1" })
      const fact = (name: string) => item.locator(".schedule-facts div").filter({ has: page.locator("dt", { hasText: name }) }).locator("dd")
      yield* use(async () => {
        await item.waitFor()
        expect(await item.locator(".schedule-when").textContent()).toBe("30 7 * * 1-5")
        expect(await item.locator(".schedule-zone").textContent()).toBe(zone)
        expect(await item.locator(".schedule-prompt").textContent()).toBe(prompt)
        // The next run in the schedule's zone, as people read it (the server's local ISO time without its T and seconds).
        const next = localIso(nextDueMs, zone)
        expect(await fact("Next run").textContent()).toBe(`${next.slice(0, 10)} 07:30 ${next.slice(-6)}`)
        expect(next.slice(-6)).toMatch(/^\+0[12]:00$/)
        expect(await fact("Fired").textContent()).toBe("0")
        expect(await fact("Missed").textContent()).toBe("0")
        expect(await fact("Misfire").textContent()).toBe("skip")
        expect(await fact("Delivers to").textContent()).toBe("the conversation that added it")

        // A one-shot beside it; an unknown user to deliver to is refused in the server's words.
        await form.getByLabel("once, at a time").check()
        await form.getByLabel("At", { exact: true }).fill("in 2 days at 10:00")
        await form.getByLabel("Prompt").fill("Remind me to renew the domain.")
        await form.getByLabel("Timezone").fill("")
        await form.getByLabel("Deliver to").fill("telegram:5")
        await form.getByRole("button", { name: "Add schedule" }).click()
        await form.getByRole("alert").waitFor()
        await form.getByLabel("Deliver to").fill("")
        await form.getByRole("button", { name: "Add schedule" }).click()
        await dialog.getByRole("listitem", { name: "Schedule 2" }).waitFor()
        const oneShot = dialog.getByRole("listitem", { name: "Schedule 2" })
        expect(await oneShot.locator(".schedule-zone").textContent()).toBe("UTC")
        expect(await oneShot.locator(".schedule-when").textContent()).toMatch(/^\d{4}-\d{2}-\d{2} 10:00 \+00:00$/)
        expect(await oneShot.locator(".schedule-facts dd").first().textContent()).toBe(await oneShot.locator(".schedule-when").textContent())
      })

      // The scheduler's record of runs (as it settles them) shows as fired and missed, with the last one's due time.
      yield* Effect.gen(function*() {
        const store = yield* ScheduleStore
        yield* store.settle(1, nextDueMs, { fired: [firedDue], missed: [missedDue] }, nextDueMs)
      }).pipe(
        Effect.provide(ScheduleStore.Default.pipe(Layer.provide(Database.layer({ filename: NodePath.join(server.dir, ".kern", "kern.db") })))),
        Effect.orDie
      )
      yield* use(async () => {
        await page.keyboard.press("Escape")
        await dialog.waitFor({ state: "detached" })
        await page.getByRole("button", { name: "Schedules", exact: true }).click()
        await fact("Missed").filter({ hasText: "last due" }).waitFor()
        expect(await fact("Missed").textContent()).toBe("1 (last due 2026-11-23 07:30 +01:00)")
        expect(await fact("Fired").textContent()).toBe("1 (last 2026-11-24 07:30 +01:00)")
        await screenshot(page, "schedules")

        // Remove asks first; Keep it keeps it.
        await item.getByRole("button", { name: "Remove schedule 1" }).click()
        const confirm = item.getByRole("group", { name: "Remove schedule 1?" })
        await confirm.getByRole("button", { name: "Keep it" }).click()
        await confirm.waitFor({ state: "detached" })
      })
      expect((yield* listed).map((s) => s.id)).toEqual([1, 2])

      yield* use(async () => {
        await item.getByRole("button", { name: "Remove schedule 1" }).click()
        await item.getByRole("group", { name: "Remove schedule 1?" }).getByRole("button", { name: "Yes, remove" }).click()
        await dialog.getByRole("status").filter({ hasText: "Removed schedule 1." }).waitFor()
        await dialog.getByRole("listitem", { name: "Schedule 2" }).waitFor()
        // The list is read again after the answer: wait for that, not for a moment.
        await item.waitFor({ state: "detached" })
        expect(await item.count()).toBe(0)
      })
      expect((yield* listed).map((s) => s.id)).toEqual([2])
      expect(pageErrors(errors)).toEqual([])
    })), 180_000)

  it.live("lists the heartbeat first, with when it ticks and how to turn it off, and no Remove", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* startServer({
        webRoot: NodePath.join(testDist, "web"),
        config: { recall: false, timezone: "UTC", heartbeatInterval: 45, activeHours: "08:00-22:00" }
      })
      const { page, errors } = yield* loggedInPage(server.base)
      const dialog = page.getByRole("dialog", { name: "Schedules" })
      yield* use(async () => {
        await page.getByRole("button", { name: "Schedules", exact: true }).click()
        const heartbeat = dialog.getByRole("listitem", { name: "Heartbeat" })
        await heartbeat.waitFor()
        expect(await heartbeat.locator(".schedule-when").textContent()).toBe("every 45 min within 08:00-22:00")
        expect(await heartbeat.textContent()).toContain("heartbeatInterval")
        expect(await heartbeat.getByRole("button").count()).toBe(0)
        expect(await dialog.getByText("No schedules yet", { exact: false }).count()).toBe(0)
      })
      expect(pageErrors(errors)).toEqual([])
    })), 120_000)
})
