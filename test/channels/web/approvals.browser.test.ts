import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { Page } from "playwright-core"
import { launchChromium, screenshot, watchPageErrors } from "../../support/browser.js"
import { testDist } from "../../support/build.js"
import { FakeReply, type FakeModelServerShape } from "../../support/fakeModelServer.js"
import { bearer, request, startServer } from "./harness.js"

// Approvals in the web UI against the real server (approvalMode ask, the real kernel running bash in a real agent
// folder) on a fake model, in real headless Chromium logged in with a ticket.

const webRoot = NodePath.join(testDist, "web")
const use = <A>(f: () => Promise<A>) => Effect.promise(f)

// Arguments a model could be talked into: shown to the operator as text, never as markup.
const hostile = "<img src=x onerror=\"window.pwned=1\"><script>window.pwned=2</script>"
const command = (marker: string) => `echo '${hostile}' > /dev/null; touch ${marker}; echo ran-ok`

const serve = (reply: ReadonlyArray<FakeReply>) =>
  Effect.gen(function*() {
    const server = yield* startServer({ webRoot, config: { approvalMode: "ask" } })
    yield* server.model.reply(...reply)
    const browser = yield* Effect.acquireRelease(use(launchChromium), (b) => Effect.promise(() => b.close()))
    const page: Page = yield* use(() => browser.newPage({ viewport: { width: 1100, height: 800 } }))
    const errors = watchPageErrors(page)
    const issued = yield* request(`${server.base}/auth/ticket`, { method: "POST", headers: bearer })
    const { url } = issued.json as { url: string }
    yield* use(async () => {
      await page.goto(url)
      await page.getByText("connected", { exact: true }).waitFor()
    })
    return { ...server, page, errors }
  })

const ask = (page: Page, text: string) =>
  use(async () => {
    const box = page.getByRole("textbox", { name: "Message to the agent" })
    await box.fill(text)
    await box.press("Enter")
    const dialog = page.getByRole("alertdialog")
    await dialog.waitFor({ timeout: 60_000 })
    return dialog
  })

/** Waits until the model has been asked `count` times (the tool's result goes back in the next request). */
const modelRequests = (model: FakeModelServerShape, count: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 600; i++) {
      const requests = yield* model.modelRequests
      if (requests.length >= count) return requests
      yield* Effect.sleep("100 millis")
    }
    throw new Error(`the model was asked fewer than ${count} times`)
  })

const pageErrors = (errors: ReadonlyArray<string>) =>
  errors.filter((e) => /Content Security Policy|Uncaught|TypeError|ReferenceError/.test(e))

/** The tool block of the call with this command, once its result is in. */
const toolBlock = (page: Page, state: "ok" | "failed" | "denied", marker: string) =>
  page.locator(`details.tool-${state}`, { hasText: "bash" }).filter({ has: page.locator(".tool-args", { hasText: marker }) })

describe("approvals in the web UI", () => {
  it.live("shows the call's full arguments as text with Deny focused and Escape inert; Approve runs the call", () =>
    Effect.scoped(Effect.gen(function*() {
      const marker = "approved.marker"
      const { page, errors, dir, model } = yield* serve([
        FakeReply.toolCalls([{ id: "call_1", name: "bash", args: { command: command(marker) } }]),
        FakeReply.text("Done, the marker is there.")
      ])
      const dialog = yield* ask(page, "make the marker")
      yield* use(async () => {
        const title = await dialog.getAttribute("aria-labelledby")
        expect(await page.locator(`#${title}`).textContent()).toContain("bash")
        expect(await dialog.getAttribute("aria-modal")).toBe("true")
        expect(await dialog.locator(".approval-args").textContent()).toBe(JSON.stringify({ command: command(marker) }, null, 2))
        // The markup in the arguments stayed text: no element was made of it, and nothing of it ran.
        expect(await dialog.locator("img, script").count()).toBe(0)
        expect(await page.evaluate("window.pwned")).toBeUndefined()
        expect(await dialog.locator(".approval-origin").textContent()).toContain("web")
        expect(await dialog.locator(".approval-expiry").textContent()).toMatch(/^in \d+:\d\d \(at /)
        expect(await dialog.locator(".approval-count").count()).toBe(0)
        expect(await page.evaluate("document.activeElement?.textContent")).toBe("Deny")
        await screenshot(page, "approval-01-asked")

        await page.keyboard.press("Escape")
        await page.waitForTimeout(300)
        expect(await dialog.isVisible()).toBe(true)
        expect(await page.evaluate("document.activeElement?.textContent")).toBe("Deny")
        // Tab stays inside the dialog.
        for (let i = 0; i < 4; i++) await page.keyboard.press("Tab")
        expect(await page.evaluate("document.activeElement?.closest('[role=alertdialog]') !== null")).toBe(true)
      })
      expect(NodeFs.existsSync(NodePath.join(dir, marker))).toBe(false)

      yield* use(async () => {
        await dialog.getByRole("button", { name: "Approve" }).click()
        await dialog.waitFor({ state: "detached" })
        const tool = toolBlock(page, "ok", marker)
        await tool.waitFor({ timeout: 60_000 })
        await tool.locator("summary").click()
        expect(await tool.locator(".tool-output").textContent()).toContain("ran-ok")
        await page.locator(".notice", { hasText: "bash approved by operator" }).waitFor()
        await page.locator("article.msg-done", { hasText: "Done, the marker is there." }).waitFor({ timeout: 60_000 })
        await screenshot(page, "approval-02-approved")
      })
      expect(NodeFs.existsSync(NodePath.join(dir, marker))).toBe(true)
      const requests = yield* modelRequests(model, 2)
      expect(JSON.stringify(requests[1]?.body)).toContain("ran-ok")
      expect(yield* use(() => page.evaluate("window.pwned"))).toBeUndefined()
      expect(pageErrors(errors)).toEqual([])
    })), 180_000)

  it.live("Enter on the dialog as it opens denies: the command does not run and the model is told PERMISSION_DENIED", () =>
    Effect.scoped(Effect.gen(function*() {
      const marker = "denied.marker"
      const { page, errors, dir, model } = yield* serve([
        FakeReply.toolCalls([{ id: "call_1", name: "bash", args: { command: command(marker) } }]),
        FakeReply.text("Understood, I left it.")
      ])
      const dialog = yield* ask(page, "make the marker")
      yield* use(async () => {
        await page.keyboard.press("Enter")
        await dialog.waitFor({ state: "detached" })
        await toolBlock(page, "denied", marker).waitFor({ timeout: 60_000 })
        await page.locator(".notice", { hasText: "bash denied by operator" }).waitFor()
        await page.locator("article.msg-done", { hasText: "Understood, I left it." }).waitFor({ timeout: 60_000 })
        await screenshot(page, "approval-03-denied")
      })
      const requests = yield* modelRequests(model, 2)
      expect(JSON.stringify(requests[1]?.body)).toContain("PERMISSION_DENIED")
      expect(NodeFs.existsSync(NodePath.join(dir, marker))).toBe(false)
      expect(pageErrors(errors)).toEqual([])
    })), 180_000)

  it.live("asks about waiting calls one at a time; a reload brings them back; an answer from elsewhere moves it on", () =>
    Effect.scoped(Effect.gen(function*() {
      const { page, errors, dir, base } = yield* serve([
        FakeReply.toolCalls([
          { id: "call_a", name: "bash", args: { command: command("first.marker") } },
          { id: "call_b", name: "bash", args: { command: command("second.marker") } }
        ]),
        FakeReply.text("One of two.")
      ])
      const dialog = yield* ask(page, "make both markers")
      const shownMarker = use(async () => {
        const args = (await dialog.locator(".approval-args").textContent()) ?? ""
        return args.includes("first.marker") ? "first.marker" : "second.marker"
      })
      yield* use(() => dialog.locator(".approval-count", { hasText: "1 of 2" }).waitFor())
      const first = yield* shownMarker
      yield* use(() => screenshot(page, "approval-04-one-of-two"))

      // A reload loses nothing: GET /approvals brings both back.
      yield* use(async () => {
        await page.reload()
        await dialog.locator(".approval-count", { hasText: "1 of 2" }).waitFor()
      })
      expect(yield* shownMarker).toBe(first)

      // Another operator (another tab, Telegram, `kern approve`: here the test, over HTTP) denies the one on screen.
      const listed = yield* request(`${base}/approvals`, { headers: bearer })
      const approvals = (listed.json as { approvals: ReadonlyArray<{ id: string; args: { command: string } }> }).approvals
      expect(approvals).toHaveLength(2)
      const target = approvals.find((a) => a.args.command.includes(first))
      if (target === undefined) throw new Error("the approval on screen is not listed")
      const decided = yield* request(`${base}/approvals/${target.id}`, {
        method: "POST",
        headers: { ...bearer, "content-type": "application/json" },
        body: JSON.stringify({ approved: false })
      })
      expect(decided.status).toBe(200)
      const second = first === "first.marker" ? "second.marker" : "first.marker"
      yield* use(async () => {
        await dialog.locator(".approval-args", { hasText: second }).waitFor()
        expect(await dialog.locator(".approval-count").count()).toBe(0)
        expect(await page.evaluate("document.activeElement?.textContent")).toBe("Deny")
        await page.locator(".notice", { hasText: "bash denied by operator" }).waitFor()
        await dialog.getByRole("button", { name: "Approve" }).click()
        await dialog.waitFor({ state: "detached" })
        await page.locator(".notice", { hasText: "bash approved by operator" }).waitFor()
        await page.locator("article.msg-done", { hasText: "One of two." }).waitFor({ timeout: 60_000 })
        await screenshot(page, "approval-05-answered-elsewhere")
      })
      expect(NodeFs.existsSync(NodePath.join(dir, first))).toBe(false)
      expect(NodeFs.existsSync(NodePath.join(dir, second))).toBe(true)
      // Answered already: the server says so.
      const again = yield* request(`${base}/approvals/${target.id}`, {
        method: "POST",
        headers: { ...bearer, "content-type": "application/json" },
        body: JSON.stringify({ approved: true })
      })
      expect(again.status).toBe(404)
      expect(pageErrors(errors)).toEqual([])
    })), 180_000)
})
