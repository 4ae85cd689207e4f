import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { HistoryItem } from "../../../src/channels/web/api.js"
import { launchChromium, watchPageErrors } from "../../support/browser.js"
import { startWebUiFixture, type WebUiFixture } from "../../support/webUiFixture.js"

// The chat's and the Memory overlay's finish against the scripted server: code blocks with a label and a copy button,
// tool rows that disclose and say "denied", channel users by name, a favicon, the Notes tab's daily notes and
// Regenerate's word, recall hits as results that open their conversation, and a resize that keeps the log at its end.

type Message = HistoryItem["message"]
const at = "2026-11-23T08:00:00.000Z"
const envelope = (iface: string, channel: string, userId: string) => ({ interface: iface, channel, userId, time: at })
const user = (text: string, from?: ReturnType<typeof envelope>): Message =>
  ({ _tag: "user", text, at, ...(from === undefined ? {} : { envelope: from }) }) as Message
const assistant = (text: string, toolCalls: ReadonlyArray<{ id: string; name: string; params: unknown }> = []): Message =>
  ({ _tag: "assistant", text, toolCalls, at }) as Message
const tool = (id: string, name: string, result: string, isError: boolean): Message =>
  ({ _tag: "tool", toolCallId: id, toolName: name, isError, result, at }) as Message

const code = "const greet = (name: string) => `<b>${name}</b> & \"friends\"`\nconsole.log(greet(\"heron\"))"
const denied = "PERMISSION_DENIED: bash is DESTRUCTIVE and needs approval, which was refused (web: denied by the operator)"
const hostileName = "<img src=x onerror=\"window.namePwned = 1\">Mallory"

const history: ReadonlyArray<Message> = [
  ...Array.from({ length: 20 }, (_, i) => [user(`question ${i}`), assistant(`A longer answer number ${i}. `.repeat(12))]).flat(),
  user("hi from slack", envelope("slack", "D0000000001", "U0000000001")),
  assistant("Hello Ada."),
  user("and from telegram", envelope("telegram", "77", "77")),
  assistant("Hello."),
  user("clean up and show me the code"),
  assistant("", [
    { id: "c1", name: "bash", params: { command: "rm -rf build" } },
    { id: "c2", name: "read", params: { path: "missing.txt" } },
    { id: "c3", name: "glob", params: { pattern: "*.ts" } }
  ]),
  tool("c1", "bash", denied, true),
  tool("c2", "read", "NOT_FOUND: missing.txt does not exist", true),
  tool("c3", "glob", "src/a.ts", false),
  assistant(`Here it is:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nAnd a bare one:\n\n\`\`\`\n<script>window.codePwned = 1</script>\n\`\`\``)
]

const currentSession: ReadonlyArray<Message> = history

/** How long a condition may take to come true on a loaded machine (expect.poll's own default is one second). */
const settle = { timeout: 20_000 }

describe("web UI finish", () => {
  let browser: Browser
  let context: BrowserContext
  let fixture: WebUiFixture
  let page: Page
  let errors: ReadonlyArray<string>
  const json: Record<string, { readonly status?: number; readonly body: unknown }> = {
    "/status": { body: { name: "polish-agent", channels: [] } },
    "/approvals": { body: { approvals: [] } },
    "/questions": { body: { questions: [] } },
    "/users": {
      body: {
        users: [
          { interface: "slack", userId: "U0000000001", chatId: "D0000000001", name: "Ada Lovelace", role: "user" },
          { interface: "telegram", userId: "77", chatId: "77", name: hostileName, role: "user" }
        ]
      }
    },
    "/sessions": {
      body: {
        currentSessionId: "s-current",
        sessions: [{ id: "s-current", createdAt: at, messages: currentSession.length, bytes: 9000, modifiedAt: at, current: true }]
      }
    },
    "/sessions/s-current/activity": {
      body: { sessionId: "s-current", total: 3, roles: { user: 1, assistant: 1, tool: 1 }, daily: [], hourly: [] }
    },
    "/notes/summary": { body: { summary: null } },
    "/notes": { body: { notes: [{ path: "notes/2026-11-23.md", date: "2026-11-23", text: "## Today\n- fed the **heron**" }], total: 1 } },
    "/recall/stats": { body: { messages: 52, chunks: 9 } },
    "/recall/search": {
      body: {
        query: "heron",
        mode: "keyword",
        hits: [{
          source: "session",
          sessionId: "s-current",
          path: null,
          messageStart: 48,
          messageEnd: 49,
          startedAt: at,
          endedAt: at,
          distance: null,
          score: 0.01639344262295082,
          text: `${"user: unrelated chatter about the weather and the garden. ".repeat(6)}\nuser: clean up and show me the code\nassistant: console.log(greet("heron"))`
        }]
      }
    }
  }

  beforeAll(async () => {
    fixture = await startWebUiFixture({ history, sessions: { "s-current": currentSession }, json })
    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: fixture.url })
    page = await context.newPage()
    errors = watchPageErrors(page)
    await page.goto(`${fixture.url}/auth?ticket=${fixture.ticket}`)
    await page.getByText("connected", { exact: true }).waitFor()
    await page.getByText("And a bare one:").waitFor()
  })

  afterAll(async () => {
    await browser?.close()
    await fixture?.close()
  })

  it("labels a code block with its language and copies the code's text, not its HTML", async () => {
    const block = page.locator("figure.code-block", { hasText: "greet" })
    expect(await block.locator(".code-lang").textContent()).toBe("ts")
    await block.getByRole("button", { name: "Copy ts code" }).click()
    await block.getByRole("button", { name: "Copy ts code" }).getByText("Copied").waitFor()
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(code)
    // The code is text: its markup shows as written and never ran.
    const bare = page.locator("figure.code-block", { hasText: "codePwned" })
    expect(await bare.locator(".code-lang").textContent()).toBe("code")
    expect(await bare.locator("pre").textContent()).toBe("<script>window.codePwned = 1</script>")
    await bare.getByRole("button", { name: "Copy code" }).click()
    await expect.poll(() => page.evaluate("navigator.clipboard.readText()"), settle).toBe("<script>window.codePwned = 1</script>")
    expect(await page.evaluate("window.codePwned")).toBeUndefined()
    // kern's buttons sit beside the sanitized markdown, never inside it.
    expect(await page.locator(".log .md button").count()).toBe(0)
  })

  it("gives tool rows a disclosure arrow that turns when opened, and says denied for a denied call", async () => {
    const row = (name: string) => page.locator("details.tool", { has: page.locator(".tool-name", { hasText: new RegExp(`^${name}$`) }) })
    const arrow = row("glob").locator("summary .tool-chevron")
    expect(await arrow.isVisible()).toBe(true)
    // The glob row is the last tool row; its arrow's drawn character and its turn, as the browser computed them.
    const style = (property: string, pseudo = "") =>
      page.evaluate(`getComputedStyle([...document.querySelectorAll("details.tool .tool-chevron")].at(-1), ${JSON.stringify(pseudo)}).${property}`)
    expect(await style("content", "::before")).toBe("\"▸\"")
    const closed = await style("transform")
    await row("glob").locator("summary").click()
    await expect.poll(() => style("transform"), settle).not.toBe(closed)

    expect(await row("bash").locator(".tool-state").textContent()).toBe("denied")
    expect(await row("bash").getAttribute("class")).toContain("tool-denied")
    expect(await row("bash").locator("summary").getAttribute("aria-label")).toBe("Tool bash, denied")
    expect(await row("bash").locator("summary").getAttribute("title")).toBe("bash is DESTRUCTIVE and needs approval, which was refused (web: denied by the operator)")
    expect(await row("read").locator(".tool-state").textContent()).toBe("failed")
  })

  it("names channel users by name, as text, and asks for the names again when a new user writes", async () => {
    await page.locator(".msg-other", { hasText: "hi from slack" }).locator(".who", { hasText: "Ada Lovelace · slack" }).waitFor()
    const hostile = page.locator(".msg-other", { hasText: "and from telegram" }).locator(".who")
    expect(await hostile.textContent()).toBe(`${hostileName} · telegram`)
    expect(await hostile.locator("img").count()).toBe(0)
    expect(await page.evaluate("window.namePwned")).toBeUndefined()

    const asked = fixture.requests.filter((r) => r.url === "/users").length
    json["/users"] = {
      body: { users: [...(json["/users"]?.body as { users: Array<unknown> }).users, { interface: "slack", userId: "U0000000002", chatId: "D0000000002", name: "Grace Hopper", role: "user" }] }
    }
    fixture.emit({ type: "incoming", turnId: "sl-2", conversationId: "slack:D0000000002", messageId: "sl-2", text: "hello, I just paired", interface: "slack", channel: "D0000000002", userId: "U0000000002" })
    await page.locator(".msg-other", { hasText: "hello, I just paired" }).locator(".who", { hasText: "Grace Hopper · slack" }).waitFor()
    // The reply that went back to her chat says to whom.
    fixture.emit({ type: "text-delta", turnId: "sl-2", conversationId: "slack:D0000000002", delta: "Welcome!" })
    fixture.emit({ type: "finish", turnId: "sl-2", conversationId: "slack:D0000000002", reply: "Welcome!", steps: 1, usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0, costUsdCents: 0 }, delivered: true })
    fixture.emit({ type: "outgoing", turnId: "sl-2", text: "Welcome!", interface: "slack", channel: "D0000000002" })
    await page.locator("article.msg-agent", { hasText: "Welcome!" }).getByText("sent to Grace Hopper · slack").waitFor()
    expect(fixture.requests.filter((r) => r.url === "/users").length).toBe(asked + 1)
  })

  it("has a favicon the server serves", async () => {
    const href = await page.locator("link[rel=icon]").getAttribute("href")
    expect(href).toBe("assets/favicon.svg")
    const icon = await page.evaluate(async (path) => {
      const response = await fetch(path)
      return { status: response.status, type: response.headers.get("content-type"), body: await response.text() }
    }, href ?? "")
    expect(icon.status).toBe(200)
    expect(icon.type).toBe("image/svg+xml")
    expect(icon.body).toContain("<svg")
  })

  it("Notes: shows the daily note there is, and says what Regenerate came to", async () => {
    await page.getByRole("button", { name: "Memory", exact: true }).click()
    const dialog = page.getByRole("dialog", { name: "Memory" })
    await dialog.getByRole("tab", { name: "Notes" }).click()
    const note = dialog.locator("details.daily-note", { hasText: "2026-11-23" })
    await note.locator("h2", { hasText: "Today" }).waitFor()
    expect(await note.getAttribute("open")).not.toBeNull()
    await dialog.getByRole("button", { name: "Regenerate" }).click()
    await dialog.getByRole("status").getByText(/Nothing to summarize yet: the summary covers the daily notes before the latest one\. There is one daily note/).waitFor()

    json["/notes/summary"] = { status: 500, body: { error: "the summary model is unreachable" } }
    await dialog.getByRole("button", { name: "Regenerate" }).click()
    await dialog.getByRole("status").getByText("Could not regenerate: the summary model is unreachable (500)").waitFor()
    // The note stays on screen whatever the summary did.
    expect(await note.isVisible()).toBe(true)
    json["/notes/summary"] = { body: { summary: { text: "A week of herons.", sources: ["notes/2026-11-22.md"], fresh: true } } }
    await dialog.getByRole("button", { name: "Regenerate" }).click()
    await dialog.getByRole("status").getByText(/^Regenerated at .+ from 1 note\.$/).waitFor()
    await dialog.getByText("A week of herons.").waitFor()
    await page.keyboard.press("Escape")
  })

  it("Recall: a hit reads as a result (time, conversation, the passage with the match) and opens its conversation there", async () => {
    await page.getByRole("button", { name: "Memory", exact: true }).click()
    const dialog = page.getByRole("dialog", { name: "Memory" })
    await dialog.getByRole("tab", { name: "Recall" }).click()
    await dialog.getByRole("searchbox", { name: "Search past conversations" }).fill("heron")
    await dialog.getByRole("searchbox", { name: "Search past conversations" }).press("Enter")
    const hit = dialog.locator("li.hit")
    await hit.waitFor()
    expect(await hit.textContent()).not.toContain("score")
    expect(await hit.textContent()).not.toContain("0.0163")
    expect(await hit.locator(".hit-where").textContent()).toBe("Conversation s-current")
    expect(await hit.getByText("messages 48–49").count()).toBe(1)
    expect(await hit.locator("time").textContent()).toBe(await page.evaluate(`new Date(${JSON.stringify(at)}).toLocaleString([], { dateStyle: "medium", timeStyle: "short" })`))
    expect(await hit.locator(".hit-passage mark").allTextContents()).toEqual(["heron"])
    expect((await hit.locator(".hit-passage").textContent())?.startsWith("…")).toBe(true)

    await hit.getByRole("button", { name: "Open in Sessions" }).click()
    expect(await dialog.getByRole("tab", { name: "Sessions" }).getAttribute("aria-selected")).toBe("true")
    const targets = dialog.locator(".raw-list .raw-target")
    await expect.poll(() => targets.count(), settle).toBe(2)
    expect(await targets.locator(".raw-index").allTextContents()).toEqual(["#49", "#48"])
    expect(await targets.first().isVisible()).toBe(true)
    // Around the hit: a few messages after it, and older ones below.
    expect(await dialog.locator(".raw-list .raw-index").first().textContent()).toBe(`#${currentSession.length - 1}`)
    expect(fixture.requests.some((r) => r.url === `/history?session=s-current&limit=20&before=${49 + 1 + 3}`)).toBe(true)
    await page.keyboard.press("Escape")
  })

  it("stays at the end of the chat when the window goes from desktop to phone width", async () => {
    const distance = () => page.locator(".log").evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight)
    await expect.poll(distance, settle).toBeLessThan(2)
    await page.setViewportSize({ width: 390, height: 844 })
    await expect.poll(distance, settle).toBeLessThan(2)
    await page.setViewportSize({ width: 1280, height: 800 })
    await expect.poll(distance, settle).toBeLessThan(2)
    await page.setViewportSize({ width: 390, height: 844 })
    await expect.poll(distance, settle).toBeLessThan(2)
    // A reader who scrolled up stays where they are.
    await page.locator(".log").evaluate((el) => el.scrollTo({ top: el.scrollHeight / 2 }))
    await expect.poll(distance, settle).toBeGreaterThan(500)
    await page.setViewportSize({ width: 1280, height: 800 })
    // Two frames: what a resize does to the log (the observer's scroll, if any) is done by then.
    await page.evaluate("new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))")
    expect(await distance()).toBeGreaterThan(300)
  })

  it("ran without a CSP violation or an uncaught error", () => {
    expect(errors.filter((e) => /Content Security Policy|Uncaught|TypeError|ReferenceError/.test(e))).toEqual([])
  })
})
