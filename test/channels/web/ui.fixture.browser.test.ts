import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { HistoryItem } from "../../../src/channels/web/api.js"
import { launchChromium, screenshot, watchPageErrors } from "../../support/browser.js"
import { startWebUiFixture, type WebUiFixture } from "../../support/webUiFixture.js"

// The UI against a scripted stand-in of kern's server (test/support/webUiFixture.ts): the states a real agent reaches
// only by chance (a stream cut mid-reply, a long history, hostile markdown) on demand. ui.browser.test.ts drives the
// real server.

type Message = HistoryItem["message"]
const at = "2026-11-23T08:00:00.000Z"
const user = (text: string): Message => ({ _tag: "user", text, at }) as Message
const assistant = (text: string, toolCalls: ReadonlyArray<{ id: string; name: string; params: unknown }> = []): Message =>
  ({ _tag: "assistant", text, toolCalls, at }) as Message

// 120 messages: the first page shows the newest 40, scrolling up pages in the rest.
const history: ReadonlyArray<Message> = [
  ...Array.from({ length: 58 }, (_, i) => [user(`old question ${i}`), assistant(`old answer ${i}`)]).flat(),
  user("list the files"),
  assistant("", [{ id: "call-h1", name: "glob", params: { pattern: "*.md" } }]),
  { _tag: "tool", toolCallId: "call-h1", toolName: "glob", isError: false, result: "AGENTS.md\nKNOWLEDGE.md", at } as Message,
  assistant("Two files: **AGENTS.md** and KNOWLEDGE.md.")
]

// An older session whose one tool output is 1.5 MB: the inspector shows a preview of it, not the whole text.
const hugeOutput = "0123456789abcdef\n".repeat(90_000)
const oldSession: ReadonlyArray<Message> = [
  user("dump the big log"),
  assistant("", [{ id: "call-big", name: "bash", params: { command: "cat big.log" } }]),
  { _tag: "tool", toolCallId: "call-big", toolName: "bash", isError: false, result: hugeOutput, at } as Message,
  assistant("That log is large."),
  ...Array.from({ length: 4 }, (_, i) => [user(`later ${i}`), assistant(`reply ${i}`)]).flat()
]

// Markdown from a model is untrusted: each of these must lose its active part on the way into the page.
const attacks = [
  "<script>window.pwned = 1</script>",
  "<img src=x onerror=\"window.pwned = 2\">",
  "[click](javascript:window.pwned=3)",
  "<a href=\"javascript:window.pwned=4\">link</a>",
  "<svg onload=\"window.pwned = 5\"><circle r=\"1\"/></svg>",
  "<iframe src=\"javascript:window.pwned=6\"></iframe>",
  "<object data=\"javascript:window.pwned=7\"></object>",
  "<embed src=\"javascript:window.pwned=8\">",
  "<form action=\"javascript:window.pwned=9\"><button>go</button></form>",
  "<p style=\"position:fixed;inset:0\">cover</p>",
  "<style>body { display: none }</style>",
  "<details open ontoggle=\"window.pwned = 10\">x</details>",
  "<math><mtext><table><mglyph><style><img src=x onerror=\"window.pwned=11\">"
]

/** What in the element survived that must not: active elements, handlers, script URLs, inline styles. */
const activeContent = (selector: string) => `(() => {
  const root = document.querySelector(${JSON.stringify(selector)})
  const found = []
  for (const el of root.querySelectorAll("*")) {
    if (["SCRIPT", "IFRAME", "OBJECT", "EMBED", "FORM", "STYLE"].includes(el.tagName)) found.push(el.tagName)
    for (const attr of el.attributes) {
      if (attr.name.startsWith("on") || attr.name === "style") found.push(el.tagName + " " + attr.name)
      if (/^\\s*javascript:/i.test(attr.value)) found.push(el.tagName + " " + attr.name + "=" + attr.value)
    }
  }
  return found
})()`

const compacted = "[output compacted: 40000 bytes → 12000 bytes; full output is artifact art_1: retrieve_tool_output({ \"artifactId\": \"art_1\" }) with offset/limit/grep]\nline 1\nline 2"

describe("web UI against a scripted server", () => {
  let browser: Browser
  let fixture: WebUiFixture
  let page: Page
  let errors: ReadonlyArray<string>
  const turns: Array<string> = []
  const notBuilt = (feature: string) => ({ status: 501, body: { error: "not built", feature } })
  const json: Record<string, { readonly status?: number; readonly body: unknown }> = {
    "/status": {
      body: {
        name: "fixture-agent",
        channels: [
          { interface: "telegram", state: "connected", detail: "", since: at },
          { interface: "slack", state: "reconnecting", detail: "socket closed", since: at }
        ]
      }
    },
    "/approvals": { body: { approvals: [] } },
    "/sessions": {
      body: {
        currentSessionId: "s-current",
        sessions: [
          { id: "s-old", createdAt: at, messages: 12, bytes: 4096, modifiedAt: at, current: false },
          { id: "s-current", createdAt: at, messages: 120, bytes: 50000, modifiedAt: at, current: true }
        ]
      }
    },
    "/sessions/s-current/activity": {
      body: {
        sessionId: "s-current",
        total: 120,
        roles: { user: 59, assistant: 60, tool: 1 },
        daily: [{ date: "2026-11-22", count: 80 }, { date: "2026-11-23", count: 40 }],
        hourly: Array.from({ length: 24 }, (_, hour) => ({ hour, count: hour % 5 }))
      }
    },
    "/sessions/s-old/activity": {
      body: { sessionId: "s-old", total: 12, roles: { user: 5, assistant: 5, tool: 2 }, daily: [{ date: "2026-11-20", count: 12 }], hourly: [] }
    },
    "/notes/summary": { body: { summary: { text: "# This week\n- shipped the **web UI**", sources: ["notes/2026-11-22.md"], fresh: true } } },
    "/context/system": {
      body: {
        sections: [
          { kind: "preamble", source: "kern", text: "You are kern.", chars: 13 },
          { kind: "file", source: "AGENTS.md", text: "<rules>\nbe brief\n</rules>\nplain tail", chars: 36 },
          { kind: "notes-summary", source: "notes/2026-11-22.md", text: "<notes_summary>shipped</notes_summary>", chars: 38 }
        ],
        totalChars: 95
      }
    },
    "/context/segments": notBuilt("context"),
    "/segments": notBuilt("context"),
    "/recall/stats": notBuilt("recall"),
    "/recall/search": notBuilt("recall")
  }

  beforeAll(async () => {
    fixture = await startWebUiFixture({
      history,
      sessions: { "s-old": oldSession },
      onMessage: (_text, turnId) => turns.push(turnId),
      json
    })
    browser = await launchChromium()
    page = await browser.newPage({ viewport: { width: 1100, height: 800 } })
    errors = watchPageErrors(page)
  })

  afterAll(async () => {
    await browser?.close()
    await fixture?.close()
  })

  it("logs in through the ticket and shows the newest history page with its tool call", async () => {
    await page.goto(`${fixture.url}/auth?ticket=${fixture.ticket}`)
    expect(new URL(page.url()).pathname).toBe("/")
    await page.getByText("connected", { exact: true }).waitFor()
    await page.getByText("Two files:").waitFor()
    expect(await page.locator(".md strong", { hasText: "AGENTS.md" }).count()).toBe(1)
    expect(await page.locator(".tool .tool-name", { hasText: "glob" }).count()).toBe(1)
    // 40 messages in the first page: the oldest ones are not loaded yet.
    expect(await page.getByText("old question 0", { exact: true }).count()).toBe(0)
    await screenshot(page, "fixture-01-history")
  })

  it("pages older messages in when the log is scrolled to the top", async () => {
    await page.locator(".log").hover()
    for (let i = 0; i < 10 && (await page.getByText("old question 0", { exact: true }).count()) === 0; i++) {
      await page.mouse.wheel(0, -20_000)
      await page.waitForTimeout(300)
    }
    await page.getByText("old question 0", { exact: true }).waitFor()
    expect(await page.getByText("old question 38", { exact: true }).count()).toBe(1)
    expect(await page.getByRole("button", { name: "Load older messages" }).count()).toBe(0)
  })

  it("sends with Enter and streams the reply as markdown, with a collapsible tool block", async () => {
    const box = page.getByRole("textbox", { name: "Message to the agent" })
    await box.fill("what is in the logs?")
    await box.press("Enter")
    await expect.poll(() => turns.length).toBe(1)
    expect(fixture.posted).toEqual([{ text: "what is in the logs?" }])
    const turnId = turns[0] ?? ""
    // Accepted, not yet taken in by a turn: on screen at once, marked queued until its incoming event.
    const mine = page.locator("article.msg-user", { hasText: "what is in the logs?" })
    await mine.getByText("queued").waitFor()
    fixture.emit({ type: "incoming", turnId, messageId: turnId, text: "what is in the logs?", interface: "web", channel: "web" })
    await mine.getByText("queued").waitFor({ state: "detached" })
    fixture.emit({ type: "thinking", turnId, step: 1 })
    await page.getByLabel("Thinking").waitFor()
    fixture.emit({ type: "text-delta", turnId, delta: "Let me **look" })
    fixture.emit({ type: "text-delta", turnId, delta: "** at them." })
    fixture.emit({ type: "tool-call", turnId, id: "call-1", name: "bash", params: { command: "tail -n 2 app.log" } })
    await page.locator(".tool-running .tool-name", { hasText: "bash" }).waitFor()
    fixture.emit({ type: "tool-result", turnId, id: "call-1", name: "bash", isError: false, text: compacted, durationMs: 1234 })
    fixture.emit({ type: "text-delta", turnId, delta: "\n\nTwo lines <img src=x onerror=\"document.title='pwned'\">." })
    fixture.emit({
      type: "finish",
      turnId,
      reply: "Two lines.",
      steps: 2,
      usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: 0, costUsdCents: 0 },
      delivered: true
    })
    fixture.emit({ type: "outgoing", turnId, text: "Two lines.", interface: "web", channel: "web" })

    const reply = page.locator(`article.msg-done`).last()
    await reply.getByText("at them.").waitFor()
    expect(await reply.locator("strong", { hasText: "look" }).count()).toBe(1)
    // DOMPurify removed the handler; the outgoing event did not repeat the reply.
    expect(await reply.locator("img").getAttribute("onerror")).toBeNull()
    expect(await page.title()).not.toBe("pwned")
    expect(await page.getByText("Two lines.", { exact: true }).count()).toBe(0)
    expect(await page.locator("article", { hasText: "what is in the logs?" }).count()).toBe(1)

    const tool = reply.locator("details.tool-ok")
    expect(await tool.getAttribute("open")).toBeNull()
    await tool.locator("summary").click()
    await tool.getByText("1.2 s").waitFor()
    await tool.getByText(/Output compacted for the model: 40000 bytes → 12000 bytes/).waitFor()
    expect(await tool.locator(".tool-args").textContent()).toContain("tail -n 2 app.log")
    await screenshot(page, "fixture-02-streamed-reply")
  })

  it("shows messages of other channels and a recall block as they arrive", async () => {
    fixture.emit({ type: "incoming", turnId: "tg-1", messageId: "tg-1", text: "hello from the phone", interface: "telegram", channel: "12345" })
    fixture.emit({ type: "recall", turnId: "tg-1", query: "phone", hits: 3, tokens: 420 })
    fixture.emit({ type: "text-delta", turnId: "tg-1", delta: "Hi!" })
    fixture.emit({ type: "finish", turnId: "tg-1", reply: "Hi!", steps: 1, usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, costUsdCents: 0 }, delivered: true })
    fixture.emit({ type: "outgoing", turnId: "tg-1", text: "Hi!", interface: "telegram", channel: "12345" })
    await page.locator(".msg-other", { hasText: "hello from the phone" }).getByText("telegram · 12345").waitFor()
    await page.getByText(/Recalled 3 passages of past conversation \(~420\s+tokens\)/).waitFor()
    await page.getByText("sent to telegram 12345").waitFor()
  })

  it("keeps every character once when the stream drops mid-reply and comes back", async () => {
    const turnId = "turn-drop"
    fixture.emit({ type: "incoming", turnId, messageId: turnId, text: "count to six", interface: "web" })
    fixture.emit({ type: "text-delta", turnId, delta: "one two " })
    const reply = page.locator("article", { hasText: "one two" })
    await reply.waitFor()
    const streamsBefore = fixture.lastEventIds.length
    fixture.dropStreams()
    await page.getByText("connection lost, reconnecting…").waitFor()
    // Said while the page was away: it must come from the replay, once.
    fixture.emit({ type: "text-delta", turnId, delta: "three four " })
    fixture.emit({ type: "text-delta", turnId, delta: "five six" })
    const last = fixture.emit({ type: "finish", turnId, reply: "one two three four five six", steps: 1, usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, costUsdCents: 0 }, delivered: true })
    await page.getByText("back online").waitFor({ timeout: 20_000 })
    await expect.poll(async () => (await reply.locator(".md").textContent())?.trim()).toBe("one two three four five six")
    expect(fixture.lastEventIds.length).toBe(streamsBefore + 1)
    expect(Number(fixture.lastEventIds.at(-1))).toBe(last.seq - 3)
    await screenshot(page, "fixture-03-back-online")
  })

  it("opens the Memory overlay by keyboard and shows every tab, saying plainly which are not built", async () => {
    await page.getByRole("button", { name: "Memory", exact: true }).focus()
    await page.keyboard.press("Enter")
    const dialog = page.getByRole("dialog", { name: "Memory" })
    await dialog.waitFor()

    await dialog.getByText("s-current").waitFor()
    expect(await dialog.locator(".session.live").count()).toBe(1)
    await dialog.locator(".session.live button.session-head").click()
    await dialog.getByRole("img", { name: "Messages per hour of day" }).waitFor()
    await dialog.getByRole("img", { name: "user: 59 of 120" }).waitFor()
    await dialog.locator(".raw-list").getByText("Two files:", { exact: false }).waitFor()
    await screenshot(page, "fixture-04-sessions")

    const tab = (name: string) => dialog.getByRole("tab", { name })
    await tab("Sessions").press("ArrowRight")
    expect(await tab("Segments").getAttribute("aria-selected")).toBe("true")
    await dialog.getByText(/Segments and summaries are not built/).waitFor()
    await screenshot(page, "fixture-05-segments")

    await tab("Notes").click()
    await dialog.locator(".summary h1", { hasText: "This week" }).waitFor()
    await screenshot(page, "fixture-06-notes")

    await tab("Recall").click()
    await dialog.getByText(/Recall is not built/).waitFor()
    await dialog.getByRole("searchbox", { name: "Search past conversations" }).fill("logs")
    await dialog.getByRole("button", { name: "Search" }).click()
    await expect.poll(() => dialog.getByText(/Recall is not built/).count()).toBe(2)
    await screenshot(page, "fixture-07-recall")

    await tab("Context").click()
    await dialog.getByText("AGENTS.md").waitFor()
    await dialog.locator(".ctx-section", { hasText: "AGENTS.md" }).locator("summary").first().click()
    await dialog.getByText("<rules>").waitFor()
    await screenshot(page, "fixture-08-context")

    await page.keyboard.press("Escape")
    await dialog.waitFor({ state: "detached" })
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Memory")
  })

  it("regenerates the notes summary with a POST that carries the page's Origin; keeps Tab inside the overlay", async () => {
    await page.getByRole("button", { name: "Memory", exact: true }).click()
    const dialog = page.getByRole("dialog", { name: "Memory" })
    await dialog.getByRole("tab", { name: "Notes" }).click()
    json["/notes/summary"] = { body: { summary: { text: "## Regenerated", sources: ["notes/2026-11-23.md"], fresh: true } } }
    await dialog.getByRole("button", { name: "Regenerate" }).click()
    await dialog.locator(".summary h2", { hasText: "Regenerated" }).waitFor()
    expect(fixture.requests.filter((r) => r.method === "POST" && r.url === "/notes/summary")).toEqual([
      { method: "POST", url: "/notes/summary", origin: fixture.url }
    ])
    // Tab from the last control wraps to the first, Shift+Tab from the first to the last: focus never leaves.
    await dialog.getByRole("button", { name: "Close memory (Esc)" }).focus()
    await page.keyboard.press("Shift+Tab")
    expect(await page.evaluate("document.querySelector('[role=dialog]').contains(document.activeElement)")).toBe(true)
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press("Tab")
      expect(await page.evaluate("document.querySelector('[role=dialog]').contains(document.activeElement)")).toBe(true)
    }
    await page.keyboard.press("Escape")
  })

  it("shows recall once it is built: its figures, and a search whose hit pages its messages in", async () => {
    json["/recall/stats"] = {
      body: {
        messages: 120,
        chunks: 14,
        unembedded: 0,
        sessions: 2,
        files: 3,
        from: "2026-11-22T08:00:00.000Z",
        to: "2026-11-23T08:00:00.000Z",
        backfillRunning: false,
        embedding: { mode: "vectors", model: "text-embedding-3-small", dimension: 1536, reason: null }
      }
    }
    json["/recall/search"] = {
      body: {
        query: "files",
        mode: "hybrid",
        hits: [{
          source: "conversation",
          sessionId: "s-current",
          path: null,
          messageStart: 116,
          messageEnd: 119,
          startedAt: at,
          endedAt: at,
          distance: 0.2,
          score: 0.03,
          text: "user: list the files"
        }]
      }
    }
    await page.getByRole("button", { name: "Memory", exact: true }).click()
    const dialog = page.getByRole("dialog", { name: "Memory" })
    await dialog.getByRole("tab", { name: "Recall" }).click()
    await dialog.locator(".figures div", { hasText: "chunks" }).getByText("14").waitFor()
    await dialog.getByText("vectors (text-embedding-3-small)").waitFor()
    await dialog.getByRole("searchbox", { name: "Search past conversations" }).fill("files")
    await dialog.getByRole("searchbox", { name: "Search past conversations" }).press("Enter")
    await dialog.getByText("user: list the files").waitFor()
    await dialog.getByRole("button", { name: "Show messages 116–119" }).click()
    await dialog.locator(".raw-list .raw-index", { hasText: "#116" }).waitFor()
    // The hit's four messages, and nothing older than its first.
    expect(await dialog.locator(".raw-list .raw").count()).toBe(4)
    expect(fixture.requests.some((r) => r.url === "/history?session=s-current&limit=20&before=120")).toBe(true)
    await screenshot(page, "fixture-11-recall-built")
    // The clicked button is gone, so focus fell to the body: Esc still closes the overlay.
    await page.keyboard.press("Escape")
    await dialog.waitFor({ state: "detached" })
  })

  it("pages a session's raw messages in as the list is scrolled, and previews a 1.5 MB message instead of drawing it", async () => {
    await page.getByRole("button", { name: "Memory", exact: true }).click()
    const dialog = page.getByRole("dialog", { name: "Memory" })
    const pages = () => fixture.requests.filter((r) => r.url.startsWith("/history?session=s-current")).map((r) => r.url)
    const already = pages().length
    await dialog.locator(".session.live button.session-head").click()
    await dialog.locator(".raw-list .raw-index", { hasText: "#119" }).waitFor()
    // One page of 20 at first: the session's 120 messages are not loaded whole.
    expect(pages().slice(already)).toEqual(["/history?session=s-current&limit=20"])
    expect(await dialog.locator(".raw-list .raw").count()).toBe(20)
    // The wheel over the list scrolls it (and then the panel around it): its end coming into view loads the next
    // older page.
    await dialog.locator(".raw-list ol").hover()
    for (let i = 0; i < 40 && (await dialog.locator(".raw-list .raw-index", { hasText: /^#0$/ }).count()) === 0; i++) {
      await page.mouse.wheel(0, 2_000)
      await page.waitForTimeout(150)
    }
    await dialog.locator(".raw-list .raw-index", { hasText: /^#0$/ }).waitFor()
    expect(await dialog.locator(".raw-list .raw").count()).toBe(120)
    expect(pages().slice(already)).toEqual([
      "/history?session=s-current&limit=20",
      ...[100, 80, 60, 40, 20].map((before) => `/history?session=s-current&limit=20&before=${before}`)
    ])
    await dialog.locator(".session.live button.session-head").click()

    await dialog.locator(".session", { hasText: "s-old" }).locator("button.session-head").click()
    const big = dialog.locator(".raw", { has: page.locator(".raw-index", { hasText: /^#2$/ }) })
    await big.getByRole("button", { name: `Show all ${hugeOutput.length.toLocaleString()} characters` }).waitFor()
    expect((await big.locator(".raw-text").textContent())?.length).toBe(1501)
    await screenshot(page, "fixture-12-raw-paging")
    await page.keyboard.press("Escape")
    await dialog.waitFor({ state: "detached" })
  })

  it("shows the chat channels' states in the header", async () => {
    const channels = page.getByRole("list", { name: "Chat channels" })
    await channels.getByText("telegram: connected", { exact: true }).waitFor()
    await channels.getByText("slack: reconnecting (socket closed)", { exact: true }).waitFor()
  })

  it("asks about the oldest approval first; a 404 moves on and says why, a 403 stays with its error", async () => {
    const approval = (id: string, expiresAt: string, command: string) => ({
      type: "approval" as const,
      id,
      toolId: "bash",
      args: { command },
      reason: "bash is DESTRUCTIVE",
      interface: "telegram",
      channel: "chat-7",
      userId: "42",
      requestedAt: new Date().toISOString(),
      expiresAt
    })
    const later = new Date(Date.now() + 120_000).toISOString()
    const sooner = new Date(Date.now() + 60_000).toISOString()
    fixture.emit(approval("apr_late", later, "echo later"))
    fixture.emit(approval("apr_soon", sooner, "echo sooner"))
    const dialog = page.getByRole("alertdialog")
    await dialog.locator(".approval-count", { hasText: "1 of 2" }).waitFor()
    expect(await dialog.locator(".approval-args").textContent()).toContain("echo sooner")
    expect(await dialog.locator(".approval-origin").textContent()).toBe("telegram · chat-7, user 42")
    await screenshot(page, "fixture-approval-01")

    // Answered elsewhere first: the server no longer knows it.
    json["/approvals/apr_soon"] = { status: 404, body: { error: "no approval apr_soon is waiting" } }
    await dialog.getByRole("button", { name: "Approve" }).click()
    await dialog.locator(".approval-args", { hasText: "echo later" }).waitFor()
    expect(await dialog.locator(".approval-count").count()).toBe(0)
    await page.locator(".notice", { hasText: "already answered elsewhere" }).waitFor()
    expect(fixture.requests.filter((r) => r.method === "POST" && r.url === "/approvals/apr_soon")).toEqual([
      { method: "POST", url: "/approvals/apr_soon", origin: fixture.url }
    ])

    // Not allowed: the dialog stays on it and says so.
    json["/approvals/apr_late"] = { status: 403, body: { error: "not an operator" } }
    await dialog.getByRole("button", { name: "Approve" }).click()
    await dialog.getByRole("alert").getByText("not an operator (403)").waitFor()
    expect(await dialog.locator(".approval-args").textContent()).toContain("echo later")
    await screenshot(page, "fixture-approval-02-refused")

    // It timed out on the server: the dialog closes and the log says how it ended.
    fixture.emit({ type: "approval-resolved", id: "apr_late", approved: false, outcome: "timeout", by: "timeout" })
    await dialog.waitFor({ state: "detached" })
    await page.locator(".notice", { hasText: "bash: nobody answered in time, denied" }).waitFor()
  })

  it("fits a phone-width screen", async () => {
    await page.setViewportSize({ width: 375, height: 740 })
    const overflow = await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    expect(overflow).toBe(0)
    await screenshot(page, "fixture-09-phone-chat")
    await page.getByRole("button", { name: "Memory", exact: true }).click()
    await page.getByRole("dialog", { name: "Memory" }).getByText("s-current").waitFor()
    const overlayOverflow = await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    expect(overlayOverflow).toBe(0)
    await screenshot(page, "fixture-10-phone-memory")
    await page.keyboard.press("Escape")
  })

  it("ran without a CSP violation or an uncaught error", () => {
    expect(errors.filter((e) => /Content Security Policy|Uncaught|TypeError|ReferenceError/.test(e))).toEqual([])
  })

  // Last: Chromium reports the inline styles of the corpus as CSP violations (blocked) while DOMPurify parses them.
  it("sanitizes the markdown it renders: a corpus of script injections leaves nothing active", async () => {
    const turnId = "turn-hostile"
    fixture.emit({ type: "incoming", turnId, messageId: turnId, text: "say something nasty", interface: "web" })
    for (const attack of attacks) fixture.emit({ type: "text-delta", turnId, delta: `${attack}\n\n` })
    fixture.emit({ type: "finish", turnId, reply: "", steps: 1, usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, costUsdCents: 0 }, delivered: true })
    await page.locator(`article.msg-done`, { hasText: "cover" }).waitFor()
    expect(await page.evaluate(activeContent(".log"))).toEqual([])
    expect(await page.evaluate("window.pwned")).toBeUndefined()
  })
})
