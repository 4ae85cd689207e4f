import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { sessionIdIn } from "../../../src/session/conversationIds.js"
import { SessionLine, UserMessage } from "../../../src/session/messages.js"
import { screenshot } from "../../support/browser.js"
import { testDist } from "../../support/build.js"
import { pairTelegramUsers } from "../../support/pairedUsers.js"
import { writeSessionFixture } from "../../support/sessionFixture.js"
import { makeTempDir } from "../../support/tempDir.js"
import { startServer } from "./harness.js"
import { loggedInPage, pageErrors } from "./uiPage.js"

// The Sessions tab against the real server, in real headless Chromium: the operator sees every conversation under
// whom and where it is, and opens a paired user's session as their own.

const use = <A>(f: () => Promise<A>) => Effect.promise(f)

const operator = sessionIdIn("20261126-100000-000-aaaa", "main")
const friend = sessionIdIn("20261126-090000-000-bbbb", "telegram-555")
const friendSays = "Alice here: what time is the meeting tomorrow?"

const folder = Effect.promise(async () => {
  const dir = NodePath.join(makeTempDir(), "agent")
  writeSessionFixture(dir, 4, operator)
  const file = writeSessionFixture(dir, 4, friend)
  const line = Schema.encodeSync(Schema.parseJson(SessionLine))(new UserMessage({ text: friendSays, at: "2026-11-26T09:30:00.000Z" }))
  NodeFs.appendFileSync(file, `${line}\n`)
  await pairTelegramUsers(dir, [{ userId: "555", displayName: "Alice" }])
  return dir
})

describe("web UI: the Sessions tab shows every conversation", () => {
  it.live("lists the operator's session and Alice's under their person and channel, and opens Alice's", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = yield* folder
      const server = yield* startServer({ dir, webRoot: NodePath.join(testDist, "web"), config: { recall: false } })
      const { page, errors } = yield* loggedInPage(server.base)
      yield* use(async () => {
        await page.getByRole("button", { name: "Memory", exact: true }).click()
        const dialog = page.getByRole("dialog", { name: "Memory" })
        const mine = dialog.getByRole("region", { name: "operator · main" })
        const alices = dialog.getByRole("region", { name: "Alice (telegram:555) · telegram DM" })
        await mine.getByText(operator, { exact: true }).waitFor()
        await alices.getByText(friend, { exact: true }).waitFor()
        expect(await alices.locator(".conversation-person").textContent()).toBe("Alice (telegram:555)")
        expect(await alices.locator(".conversation-channel").textContent()).toBe("telegram DM")
        // The operator's conversation comes first.
        expect(await dialog.locator(".conversation").first().getAttribute("aria-label")).toBe("operator · main")

        await alices.getByRole("button", { name: new RegExp(friend) }).click()
        await alices.locator(".raw-list").getByText(friendSays).waitFor()
        await alices.getByRole("img", { name: "user: 2 of 5" }).waitFor()
        expect(await mine.locator(".session-detail").count()).toBe(0)
        await screenshot(page, "sessions-by-conversation")
      })
      expect(pageErrors(errors)).toEqual([])
    })), 180_000)
})
