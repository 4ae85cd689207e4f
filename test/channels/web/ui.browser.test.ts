import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ChildProcess } from "node:child_process"
import type { Page } from "playwright-core"
import { initAgentWithModel } from "../../support/agentFolder.js"
import { launchChromium, screenshot, watchPageErrors } from "../../support/browser.js"
import { runKern } from "../../support/cli.js"
import { freePortAsync } from "../../support/freePort.js"
import { startTcpProxy } from "../../support/tcpProxy.js"
import { FakeReply, make as makeFakeServer } from "../../support/fakeModelServer.js"
import { seedSpendIn, today } from "../../support/spendRows.js"

// End to end: the real `kern run --background` serving its API and the built web UI, an agent whose model is the fake
// model server, and real headless Chromium logging in through the one-time URL `kern open` prints.

const waitForHealth = (base: string, child: () => ChildProcess | undefined, output: () => string) =>
  Effect.promise(async () => {
    for (let i = 0; i < 300; i++) {
      if (child()?.exitCode !== null && child()?.exitCode !== undefined) throw new Error(`kern exited: ${output()}`)
      const ok = await fetch(`${base}/health`).then((r) => r.ok, () => false)
      if (ok) return
      await new Promise((r) => setTimeout(r, 100))
    }
    throw new Error(`kern did not answer /health: ${output()}`)
  })

const use = <A>(f: () => Promise<A>) => Effect.promise(f)

/** `kern run --background` in `dir` on `port`, killed when the scope closes; answers once /health does. */
const startKern = (dir: string, port: number) =>
  Effect.gen(function*() {
    let child: ChildProcess | undefined
    let output = ""
    yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
    const exited = runKern(["run", "--background"], {
      cwd: dir,
      env: { OPENROUTER_API_KEY: "sk-test", KERN_PORT: String(port) },
      onSpawn: (spawned) => {
        child = spawned
        spawned.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
      }
    })
    const base = `http://127.0.0.1:${port}`
    yield* waitForHealth(base, () => child, () => output)
    /** Kills it outright (a crash), and waits until it has gone. */
    const crash = use(() => {
      child?.kill("SIGKILL")
      return exited
    })
    return { base, crash }
  })

/** A one-time login URL from `kern open` (no desktop here, so it only prints it). */
const loginUrl = (dir: string, port: number) =>
  use(() => runKern(["open"], { cwd: dir, env: { KERN_PORT: String(port) } })).pipe(
    Effect.map((result) => {
      const url = result.stdout.trim().split("\n").at(-1) ?? ""
      if (result.status !== 0 || !url.includes("/auth?ticket=")) throw new Error(`kern open failed: ${result.stderr}${result.stdout}`)
      return url
    })
  )

const newPage = Effect.gen(function*() {
  const browser = yield* Effect.acquireRelease(use(launchChromium), (b) => Effect.promise(() => b.close()))
  const page: Page = yield* use(() => browser.newPage({ viewport: { width: 1100, height: 800 } }))
  return { page, errors: watchPageErrors(page) }
})

describe("web UI end to end", () => {
  it.live("logs in with a ticket, streams a reply with a tool call, and opens every Memory tab", () =>
    Effect.scoped(Effect.gen(function*() {
      const model = yield* makeFakeServer
      yield* model.reply(
        FakeReply.toolCalls([{ id: "call_glob", name: "glob", args: { pattern: "*.md" } }], { text: "Let me look." }),
        FakeReply.text("There are **five** markdown files here:\n\n- AGENTS.md\n- IDENTITY.md")
      )
      const dir = initAgentWithModel(model.baseURL)
      const port = yield* use(freePortAsync)
      const { base } = yield* startKern(dir, port)
      const url = yield* loginUrl(dir, port)
      expect(url).toMatch(new RegExp(`^${base}/auth\\?ticket=`))
      const { page, errors } = yield* newPage

      yield* use(async () => {
        await page.goto(url)
        expect(new URL(page.url()).pathname).toBe("/")
        await page.getByText("connected", { exact: true }).waitFor()
        await page.getByText("No messages yet").waitFor()
        await screenshot(page, "e2e-01-logged-in")

        const box = page.getByRole("textbox", { name: "Message to the agent" })
        await box.fill("which markdown files are here?")
        await box.press("Enter")
        await page.locator("article.msg-user", { hasText: "which markdown files are here?" }).waitFor()
        const reply = page.locator("article.msg-done")
        await reply.locator("strong", { hasText: "five" }).waitFor({ timeout: 60_000 })
        expect(await reply.locator("li", { hasText: "IDENTITY.md" }).count()).toBe(1)
        // Every character of both steps, once and in order. (Where the first step's text ends relative to the tool
        // block is the server's business: its NO_REPLY filter holds a step's last characters back until more text comes.)
        const shown = (await reply.locator(".md").allTextContents()).map((t) => t.trim()).join("")
        expect(shown.replace(/\s+/g, " ").trim()).toBe("Let me look.There are five markdown files here: AGENTS.md IDENTITY.md")
        const tool = reply.locator("details.tool-ok", { hasText: "glob" })
        await tool.locator("summary").click()
        expect(await tool.locator(".tool-args").textContent()).toContain("*.md")
        expect(await tool.locator(".tool-output").textContent()).toContain("AGENTS.md")
        await tool.locator(".tool-duration").waitFor()
        await screenshot(page, "e2e-02-reply-and-tool")
      })

      // The model got the tool's result back: the turn really ran through the kernel.
      const requests = yield* model.modelRequests
      expect(requests).toHaveLength(2)
      expect(JSON.stringify(requests[1]?.body)).toContain("AGENTS.md")

      yield* use(async () => {
        // A reload draws the same conversation from /history: once, with its tool call.
        await page.reload()
        await page.locator("article.msg-user", { hasText: "which markdown files are here?" }).waitFor()
        expect(await page.locator("article.msg-user").count()).toBe(1)
        expect(await page.locator("details.tool", { hasText: "glob" }).count()).toBe(1)

        await page.getByRole("button", { name: "Memory", exact: true }).click()
        const dialog = page.getByRole("dialog", { name: "Memory" })
        const tab = (name: string) => dialog.getByRole("tab", { name })
        await dialog.locator(".session.live").waitFor()
        await dialog.locator(".session.live button.session-head").click()
        await dialog.getByRole("img", { name: "Messages per hour of day" }).waitFor()
        await dialog.locator(".raw-list").getByText("which markdown files are here?").waitFor()
        await screenshot(page, "e2e-03-sessions")

        // A short conversation: nothing segmented yet, everything raw; the token breakdown of the next request shows.
        await tab("Segments").click()
        await dialog.getByText(/No segments yet/).waitFor()
        await dialog.getByText(/Next request \(before its message\): [\d,]+ of 100,000 tokens/).waitFor()
        await screenshot(page, "e2e-04-segments")

        await tab("Notes").click()
        await dialog.getByRole("button", { name: "Regenerate" }).waitFor()
        // A new agent has no two daily notes yet: nothing to summarize, and the tab says so.
        await dialog.getByText("No summary yet", { exact: false }).waitFor()
        // The real server's GET /notes answered (a new agent may have no daily note yet): loaded, not failed.
        await dialog.getByRole("heading", { name: "Daily notes" }).waitFor()
        await expect.poll(() => dialog.getByText("Loading daily notes", { exact: false }).count()).toBe(0)
        expect(await dialog.locator(".notes .failed").count()).toBe(0)
        await screenshot(page, "e2e-05-notes")

        // Recall indexed the turn in the background: its figures show, and a search finds the tool's output.
        await tab("Recall").click()
        await dialog.locator(".figures").getByText("chunks").waitFor()
        await dialog.getByRole("searchbox", { name: "Search past conversations" }).fill("markdown files")
        await dialog.getByRole("button", { name: "Search", exact: true }).click()
        await dialog.locator("ol.hits li", { hasText: "which markdown files are here?" }).first().waitFor()
        await screenshot(page, "e2e-06-recall")

        await tab("Context").click()
        await dialog.locator(".ctx-section", { hasText: "AGENTS.md" }).first().waitFor()
        await screenshot(page, "e2e-07-context")

        await page.keyboard.press("Escape")
        await dialog.waitFor({ state: "detached" })
        await page.setViewportSize({ width: 375, height: 740 })
        expect(await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")).toBe(0)
        await screenshot(page, "e2e-08-phone")
      })
      expect(errors.filter((e) => /Content Security Policy|Uncaught|TypeError|ReferenceError/.test(e))).toEqual([])
    })), 180_000)

  it.live("a connection cut mid-turn: the page says so, resumes from the real server's replay, and shows every character once", () =>
    Effect.scoped(Effect.gen(function*() {
      const model = yield* makeFakeServer
      // The second model answer comes while the browser is cut off: the server's replay must bring it.
      yield* model.reply(
        FakeReply.toolCalls([{ id: "call_glob", name: "glob", args: { pattern: "*.md" } }], { text: "Looking now." }),
        FakeReply.text("Found **five** files, all markdown.", { delay: "3 seconds" })
      )
      const port = yield* use(freePortAsync)
      const proxy = yield* Effect.acquireRelease(use(() => startTcpProxy(port)), (p) => Effect.promise(() => p.close()))
      const proxyBase = `http://127.0.0.1:${proxy.port}`
      // The page's origin is the proxy's: the server trusts it for cookie-authenticated POSTs through corsOrigins.
      const dir = initAgentWithModel(model.baseURL, { corsOrigins: [proxyBase] })
      const { base } = yield* startKern(dir, port)
      const url = (yield* loginUrl(dir, port)).replace(base, proxyBase)
      const { page, errors } = yield* newPage

      yield* use(async () => {
        await page.goto(url)
        await page.getByText("connected", { exact: true }).waitFor()
        const box = page.getByRole("textbox", { name: "Message to the agent" })
        await box.fill("count the files")
        await box.press("Enter")
        await page.locator("details.tool-ok", { hasText: "glob" }).waitFor({ timeout: 60_000 })
        proxy.cut(4_000)
        await page.getByText("connection lost, reconnecting…").waitFor()
        await screenshot(page, "e2e-09-reconnecting")
        await page.getByText("back online").waitFor({ timeout: 30_000 })
        const reply = page.locator("article.msg-done")
        await reply.locator("strong", { hasText: "five" }).waitFor({ timeout: 30_000 })
        const shown = (await reply.locator(".md").allTextContents()).map((t) => t.trim()).join("")
        expect(shown.replace(/\s+/g, " ")).toBe("Looking now.Found five files, all markdown.")
        expect(await page.locator("article.msg-user").count()).toBe(1)
        expect(await page.locator("details.tool").count()).toBe(1)
        await screenshot(page, "e2e-10-back-online")
      })
      // The browser resumed the stream where it had stopped, not from scratch.
      const streams = proxy.heads.filter((head) => /^GET \/events[ ?]/.test(head))
      expect(streams.length).toBeGreaterThanOrEqual(2)
      expect(streams.at(-1)).toMatch(/\r\nlast-event-id: \d+/i)
      expect(errors.filter((e) => /Content Security Policy|Uncaught|TypeError|ReferenceError/.test(e))).toEqual([])
    })), 180_000)

  // The agent dies (SIGKILL: while a browser is connected, SIGTERM does not yet end `kern run --background`).
  it.live("after the agent restarts the page is still logged in (sessions are in kern.db) and shows the conversation", () =>
    Effect.scoped(Effect.gen(function*() {
      const model = yield* makeFakeServer
      yield* model.reply(FakeReply.text("Before the restart."))
      const dir = initAgentWithModel(model.baseURL)
      const port = yield* use(freePortAsync)
      const first = yield* startKern(dir, port)
      const { page } = yield* newPage
      const firstUrl = yield* loginUrl(dir, port)
      yield* use(async () => {
        await page.goto(firstUrl)
        const box = page.getByRole("textbox", { name: "Message to the agent" })
        await box.fill("remember this")
        await box.press("Enter")
        await page.locator("article.msg-done", { hasText: "Before the restart." }).waitFor({ timeout: 60_000 })
      })
      yield* first.crash
      yield* startKern(dir, port)
      yield* use(async () => {
        // The same cookie, no new ticket: the new process finds the session in kern.db.
        await page.reload()
        await page.getByText("connected", { exact: true }).waitFor({ timeout: 30_000 })
        await page.locator("article.msg-done", { hasText: "Before the restart." }).waitFor()
        expect(await page.locator("article.msg-user", { hasText: "remember this" }).count()).toBe(1)
        expect(await page.getByText("logged out", { exact: true }).count()).toBe(0)
        await screenshot(page, "e2e-11-after-restart")
      })
    })), 180_000)
  it.live("the header shows today's spend against the perDay cap, and says when a cap is reached", () =>
    Effect.scoped(Effect.gen(function*() {
      const model = yield* makeFakeServer
      const limits = { perDay: { usdCents: 500, tokens: 2000000 }, perUser: { usdCents: 10 } }
      const dir = initAgentWithModel(model.baseURL, { limits, timezone: "UTC" })
      // The ledger as the agent's model calls would have left it today: one person over their perUser cap.
      yield* seedSpendIn(dir, today("UTC"), [
        ["agent", "", 9000, 1000, 12.5],
        ["user", "telegram:42", 6000, 700, 11.25],
        ["user", "operator", 3000, 300, 1.25]
      ])
      const port = yield* use(freePortAsync)
      yield* startKern(dir, port)
      const url = yield* loginUrl(dir, port)
      const { page, errors } = yield* newPage
      yield* use(async () => {
        await page.goto(url)
        await page.getByText("connected", { exact: true }).waitFor()
        const spend = page.locator("header .spend")
        await spend.waitFor()
        expect(await spend.textContent()).toBe("today 12.50¢ of 500¢, 10000 of 2000000 tokens (cap reached)")
        expect(await spend.getAttribute("class")).toContain("spend-reached")
        const details = await spend.getAttribute("title")
        expect(details).toContain(`spend on ${today("UTC")}: today 12.50¢ of 500¢, 10000 of 2000000 tokens`)
        expect(details).toContain("limits.perUser.usdCents 10 for telegram:42 reached (11.25 spent)")
        await screenshot(page, "e2e-12-spend")
      })
      expect(errors.filter((e) => /Content Security Policy|Uncaught|TypeError|ReferenceError/.test(e))).toEqual([])
      // Loading the page made no model call.
      expect(yield* model.modelRequests).toHaveLength(0)
    })), 180_000)
})
