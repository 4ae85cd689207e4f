import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodePath from "node:path"
import type { Page } from "playwright-core"
import { screenshot } from "../../support/browser.js"
import { testDist } from "../../support/build.js"
import { FakeReply } from "../../support/fakeModelServer.js"
import { bearer, request, startServer } from "./harness.js"
import { loggedInPage, pageErrors } from "./uiPage.js"

// A turn that fails or is stopped, and a new conversation, in the web UI against the real server on a fake model, in
// real headless Chromium logged in with a ticket.

const use = <A>(f: () => Promise<A>) => Effect.promise(f)

const openPage = (replies: ReadonlyArray<FakeReply>) =>
  Effect.gen(function*() {
    const server = yield* startServer({ webRoot: NodePath.join(testDist, "web"), config: { recall: false } })
    yield* server.model.reply(...replies)
    return { ...server, ...(yield* loggedInPage(server.base)) }
  })

const say = (page: Page, text: string) =>
  use(async () => {
    const box = page.getByRole("textbox", { name: "Message to the agent" })
    await box.fill(text)
    await box.press("Enter")
  })

const connection = (page: Page) => page.locator("header .conn").textContent()

describe("web UI: failed and stopped turns, a new conversation", () => {
  it.live("a failed turn is shown as the turn's error, the header stays connected, and a reload shows it again", () =>
    Effect.scoped(Effect.gen(function*() {
      const { page, errors, model } = yield* openPage([FakeReply.error(400), FakeReply.text("Back to normal.")])
      yield* say(page, "this one fails")
      yield* use(async () => {
        await page.locator(".turn-error", { hasText: "ProviderFailed" }).waitFor({ timeout: 60_000 })
        // A turn's failure is not the connection's: the next event still arrives on the same stream.
        expect(await connection(page)).toBe("connected")
      })
      yield* say(page, "and this one works")
      yield* use(async () => {
        await page.locator("article.msg-done", { hasText: "Back to normal." }).waitFor({ timeout: 60_000 })
        expect(await connection(page)).toBe("connected")
        await screenshot(page, "turn-failed-live")
        await page.reload()
        await page.getByText("connected", { exact: true }).waitFor({ timeout: 60_000 })
        // The failure is in the record: under its message after a reload, the next turn answered below it.
        await page.locator(".turn-error", { hasText: "ProviderFailed" }).waitFor()
        await page.locator("article.msg-done", { hasText: "Back to normal." }).waitFor()
        await screenshot(page, "turn-failed-reloaded")
      })
      expect(yield* model.modelRequests).toHaveLength(2)
      expect(pageErrors(errors)).toEqual([])
    })), 180_000)

  it.live("Stop ends a long turn: what it said stays, it says Stopped, and a reload shows the same", () =>
    Effect.scoped(Effect.gen(function*() {
      const { page, errors, model } = yield* openPage([
        FakeReply.text("Here is a long story that goes on and on", { hangAfter: 3 })
      ])
      yield* say(page, "tell me a long story")
      yield* use(async () => {
        const stop = page.getByRole("button", { name: "Stop", exact: true })
        await page.locator("article", { hasText: "Here is a long" }).waitFor({ timeout: 60_000 })
        await screenshot(page, "turn-stop-running")
        await stop.click()
        await page.locator(".turn-error", { hasText: "Stopped" }).waitFor({ timeout: 60_000 })
        await stop.waitFor({ state: "detached" })
        expect(await connection(page)).toBe("connected")
        // Everything it had said, whole, and then that it stopped.
        const turn = page.locator("article", { has: page.locator(".turn-error") })
        const said = (await turn.locator(".md").allTextContents()).map((t) => t.trim()).join("")
        expect(said).toBe("Here is a long story that go")
        const errorAfterText = "(() => { const md = [...document.querySelectorAll('.md')].at(-1); " +
          "return (md.compareDocumentPosition(document.querySelector('.turn-error')) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0 })()"
        expect(await page.evaluate(errorAfterText)).toBe(true)
        await screenshot(page, "turn-stopped")
        await page.reload()
        await page.getByText("connected", { exact: true }).waitFor({ timeout: 60_000 })
        await page.locator(".turn-error", { hasText: "stopped by the operator" }).waitFor()
        expect(await page.locator("article", { hasText: "Here is a long" }).count()).toBeGreaterThan(0)
      })
      expect(yield* model.modelRequests).toHaveLength(1)
      expect(pageErrors(errors)).toEqual([])
    })), 180_000)

  it.live("New conversation clears the view and starts a new session: the model no longer sees the old messages", () =>
    Effect.scoped(Effect.gen(function*() {
      const { page, errors, model, base } = yield* openPage([FakeReply.text("Noted the secret plan."), FakeReply.text("A fresh start.")])
      const before = ((yield* request(`${base}/sessions`, { headers: bearer })).json as { currentSessionId: string }).currentSessionId
      yield* say(page, "remember the secret plan")
      yield* use(async () => {
        await page.locator("article.msg-done", { hasText: "Noted the secret plan." }).waitFor({ timeout: 60_000 })
        await page.getByRole("button", { name: "New conversation" }).click()
        await page.getByText("No messages yet").waitFor()
        await screenshot(page, "new-conversation")
      })
      const after = ((yield* request(`${base}/sessions`, { headers: bearer })).json as { currentSessionId: string }).currentSessionId
      expect(after).not.toBe(before)
      yield* say(page, "hello again")
      yield* use(async () => {
        await page.locator("article.msg-done", { hasText: "A fresh start." }).waitFor({ timeout: 60_000 })
        expect(await page.locator("article.msg-user").count()).toBe(1)
        await page.reload()
        await page.locator("article.msg-done", { hasText: "A fresh start." }).waitFor()
        expect(await page.getByText("Noted the secret plan.").count()).toBe(0)
      })
      const requests = yield* model.modelRequests
      expect(JSON.stringify(requests[1]?.body)).not.toContain("secret plan")
      expect(pageErrors(errors)).toEqual([])
    })), 180_000)
})
