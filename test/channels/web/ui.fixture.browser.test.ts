import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ContextSegmentsResponse, HistoryItem, SegmentsResponse } from "../../../src/channels/web/api.js"
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
  "<math><mtext><table><mglyph><style><img src=x onerror=\"window.pwned=11\">",
  // A reply must not render controls that pass for kern's own, nor redirect or restyle the page.
  "<button type=\"button\">Approve</button>",
  "<input type=\"submit\" value=\"Approve\">",
  "<select><option>yes</option></select>",
  "<textarea>paste your token here</textarea>",
  "<meta http-equiv=\"refresh\" content=\"0;url=https://example.invalid/\">",
  "<svg><a href=\"#\"><text onclick=\"window.pwned = 12\">x</text></a></svg>",
  // Inputs: only a task list's checkbox renders, disabled and bare; no text field, submit, image or enabled box.
  "<input type=\"text\" value=\"paste your token here\">",
  "<input type=submit value=Approve>",
  "<input type=\"image\" src=\"x\" onerror=\"window.pwned = 13\">",
  "<input value=\"no type\">",
  "<input type=\"checkbox\" onclick=\"window.pwned = 14\" name=\"approve\" form=\"f\" formaction=\"javascript:window.pwned=15\" style=\"position:fixed\">",
  "<form id=\"f\"><input type=\"checkbox\" checked><button>Approve</button></form>",
  "- [ ] todo\n- [x] done"
]

/** What in the element survived that must not: active elements, handlers, script URLs, inline styles. */
const activeContent = (selector: string) => `(() => {
  const found = []
  for (const el of document.querySelectorAll(${JSON.stringify(selector)} + " *")) {
    if (["SCRIPT", "IFRAME", "OBJECT", "EMBED", "FORM", "STYLE", "BUTTON", "SELECT", "OPTION", "TEXTAREA", "META", "svg"].includes(el.tagName)) found.push(el.tagName)
    // The one input allowed: a task list's checkbox, disabled, with its state and nothing else.
    if (el.tagName === "INPUT" && !(el.type === "checkbox" && el.disabled && [...el.attributes].every((a) => ["type", "checked", "disabled"].includes(a.name)))) {
      found.push("INPUT " + [...el.attributes].map((a) => a.name).join(" "))
    }
    for (const attr of el.attributes) {
      if (attr.name.startsWith("on") || attr.name === "style") found.push(el.tagName + " " + attr.name)
      if (/^\\s*javascript:/i.test(attr.value)) found.push(el.tagName + " " + attr.name + "=" + attr.value)
    }
  }
  return found
})()`

// The system prompt's sections as kern renders them: AGENTS.md quotes a closing tag, which kern escaped.
const agentsSection = "<document path=\"AGENTS.md\">\n<rules>\nbe brief\n</rules>\nplain tail\n&lt;/document> quoted, not closing\n</document>"
const notesSection = "<notes_summary of=\"notes/2026-11-22.md\" stale=\"true\">\nshipped\n</notes_summary>"
const toolsSection = "<tools>\nread: Read a file.\nbash: Run a command.\n</tools>"
const conversationSection = "<conversation_summary>\n<summary>\nlevel: L2\nmessages: 0-4500\nthe early conversation\n</summary>\n" +
  "<summary>\nlevel: L0\nmessages: 4500-4520\nfirst: 2026-11-23T06:39:26.634Z\nlast: 2026-11-23T06:44:25.437Z\nthe recent detail\n</summary>\n" +
  "</conversation_summary>"

const compacted = "[output compacted: 40000 bytes → 12000 bytes; full output is artifact art_1: retrieve_tool_output({ \"artifactId\": \"art_1\" }) with offset/limit/grep]\nline 1\nline 2"

// The current session's segment tree as GET /segments answers it: ten L0s rolled up into L1 #11 (in context), L0 #12
// in context beside it, and L0 #13 after the cut, not summarized yet. #10's summary carries an injection.
const segmentAt = (minutes: number) => new Date(Date.parse("2026-11-20T08:00:00.000Z") + minutes * 60_000).toISOString()
const l0 = (id: number, start: number, parentId: number | null, summary: string | null, inContext = false) => ({
  id,
  level: 0,
  start,
  end: start + 10,
  tokens: 15230,
  summaryTokens: summary === null ? 0 : 980,
  summary,
  firstAt: segmentAt(id * 60),
  lastAt: segmentAt(id * 60 + 25),
  parentId,
  inContext
})
const rolledUp = { ...l0(11, 0, null, "## Week one\nSet up the **deploy pipeline** and the logs.", true), level: 1, start: 0, end: 100, tokens: 152300, summaryTokens: 1200, firstAt: segmentAt(60), lastAt: segmentAt(625) }
const segmentTree = [
  ...Array.from({ length: 9 }, (_, i) => l0(i + 1, i * 10, 11, `Segment ${i + 1}: routine work.`)),
  l0(10, 90, 11, "Tried a hostile page: <img src=x onerror=\"window.segmentPwned = 1\"> and moved on."),
  rolledUp,
  l0(12, 100, null, "### Deploy pipeline\n- moved the **staging** deploy to Fridays\n- `kern status` shows it", true),
  l0(13, 110, null, null)
]
const segmentsAnswer: SegmentsResponse = { sessionId: "s-current", messages: 120, cut: 110, segments: segmentTree }
const contextSegmentsAnswer: ContextSegmentsResponse = {
  request: "next",
  leftOut: ["the next turn's own message"],
  sessionId: "s-current",
  messages: 120,
  cut: 110,
  budget: { maxContextTokens: 100000, summary: 60000, raw: 20000 },
  tokens: { system: 6200, tools: 3400, summary: 2300, raw: 12100, total: 24000 },
  toolsCost: { builtin: 3100, mcp: 300, lazyTools: 120, saved: 27500 },
  injected: segmentTree.filter((s) => s.inContext)
}

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
        ],
        summarizer: {
          state: "failing",
          lastSuccessAt: null,
          consecutiveFailures: 3,
          lastError: "the summary model failed on messages 0–243: HTTP 404: model not found",
          lastFailureAt: at,
          nextAttemptAt: at,
          sessionId: "s-current",
          lagMessages: 120,
          fallbackCut: true
        }
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
        request: "next",
        sections: [
          { kind: "preamble", source: "kern", text: "You are kern.", chars: 13, tokens: 4 },
          { kind: "file", source: "AGENTS.md", text: agentsSection, chars: agentsSection.length, tokens: 31 },
          { kind: "notes-summary", source: "notes/2026-11-22.md", text: notesSection, chars: notesSection.length, tokens: 17 },
          { kind: "tools", source: "tools", text: toolsSection, chars: toolsSection.length, tokens: 14 },
          { kind: "conversation-summary", source: "conversation", text: conversationSection, chars: conversationSection.length, tokens: 1_203 }
        ],
        totalChars: 13 + agentsSection.length + notesSection.length + toolsSection.length + conversationSection.length + 8,
        totalTokens: 1_277
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
    fixture.emit({ type: "incoming", turnId, conversationId: "web:web", messageId: turnId, text: "what is in the logs?", interface: "web", channel: "web", userId: "operator" })
    await mine.getByText("queued").waitFor({ state: "detached" })
    fixture.emit({ type: "thinking", turnId, conversationId: "web:web", step: 1 })
    await page.getByLabel("Thinking").waitFor()
    fixture.emit({ type: "text-delta", turnId, conversationId: "web:web", delta: "Let me **look" })
    fixture.emit({ type: "text-delta", turnId, conversationId: "web:web", delta: "** at them." })
    fixture.emit({ type: "tool-call", turnId, conversationId: "web:web", id: "call-1", name: "bash", params: { command: "tail -n 2 app.log" } })
    await page.locator(".tool-running .tool-name", { hasText: "bash" }).waitFor()
    fixture.emit({ type: "tool-result", turnId, conversationId: "web:web", id: "call-1", name: "bash", isError: false, text: compacted, durationMs: 1234 })
    fixture.emit({ type: "text-delta", turnId, conversationId: "web:web", delta: "\n\nTwo lines <img src=x onerror=\"document.title='pwned'\">." })
    fixture.emit({
      type: "finish",
      turnId,
      conversationId: "web:web",
      reply: "Two lines.",
      steps: 2,
      usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: 0, cacheWriteTokens: 0, costUsdCents: 0 },
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
    fixture.emit({ type: "incoming", turnId: "tg-1", conversationId: "web:1", messageId: "tg-1", text: "hello from the phone", interface: "telegram", channel: "12345", userId: "12345" })
    fixture.emit({ type: "recall", turnId: "tg-1", conversationId: "web:1", query: "phone", hits: 3, tokens: 420 })
    fixture.emit({ type: "text-delta", turnId: "tg-1", conversationId: "web:1", delta: "Hi!" })
    fixture.emit({ type: "finish", turnId: "tg-1", conversationId: "web:1", reply: "Hi!", steps: 1, usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0, costUsdCents: 0 }, delivered: true })
    fixture.emit({ type: "outgoing", turnId: "tg-1", text: "Hi!", interface: "telegram", channel: "12345" })
    await page.locator(".msg-other", { hasText: "hello from the phone" }).getByText("telegram · 12345").waitFor()
    await page.getByText(/Recalled 3 passages of past conversation \(~420\s+tokens\)/).waitFor()
    await page.getByText("sent to telegram · 12345").waitFor()
  })

  it("keeps every character once when the stream drops mid-reply and comes back", async () => {
    const turnId = "turn-drop"
    fixture.emit({ type: "incoming", turnId, conversationId: "web:web", messageId: turnId, text: "count to six", interface: "web", channel: "web", userId: "operator" })
    fixture.emit({ type: "text-delta", turnId, conversationId: "web:web", delta: "one two " })
    const reply = page.locator("article", { hasText: "one two" })
    await reply.waitFor()
    const streamsBefore = fixture.lastEventIds.length
    fixture.dropStreams()
    await page.getByText("connection lost, reconnecting…").waitFor()
    // Said while the page was away: it must come from the replay, once.
    fixture.emit({ type: "text-delta", turnId, conversationId: "web:web", delta: "three four " })
    fixture.emit({ type: "text-delta", turnId, conversationId: "web:web", delta: "five six" })
    const last = fixture.emit({ type: "finish", turnId, conversationId: "web:web", reply: "one two three four five six", steps: 1, usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0, costUsdCents: 0 }, delivered: true })
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
    await dialog.getByText("5 sections, 1,277 tokens", { exact: false }).waitFor()
    // Each section: its kind, source and the server's token count, coloured by kind, folded until opened.
    const section = (kind: string) => dialog.locator(`.ctx-section.ctx-${kind}`)
    expect(await dialog.locator(".ctx-section").count()).toBe(5)
    expect(await section("file").locator("summary .ctx-size").first().textContent()).toBe("31 tokens")
    expect(await section("tools").locator(".ctx-kind").textContent()).toBe("tools")
    await section("file").locator("summary").first().click()
    await section("file").locator(".ctx-open", { hasText: "<document path=\"AGENTS.md\">" }).waitFor()
    // The file's text is whole: its own markup, and the quoted closing tag, did not end the section.
    const agents = await section("file").locator("pre.ctx-text").textContent()
    expect(agents).toContain("<rules>\nbe brief\n</rules>")
    expect(agents).toContain("&lt;/document> quoted, not closing")
    await section("notes-summary").locator("summary").first().click()
    await section("notes-summary").locator(".ctx-open", { hasText: "stale=\"true\"" }).waitFor()
    // The conversation summary folds into its <summary> blocks, each under its level and message range.
    const conversation = section("conversation-summary")
    await conversation.locator("summary").first().click()
    const blocks = conversation.locator(".ctx-tag > summary")
    expect(await blocks.count()).toBe(2)
    expect(await blocks.first().textContent()).toContain("L2 · messages 0-4500")
    expect(await blocks.last().textContent()).toContain("L0 · messages 4500-4520 · 2026-11-23T06:39:26.634Z – 2026-11-23T06:44:25.437Z")
    await blocks.last().click()
    await conversation.getByText("the recent detail").waitFor()
    expect(await conversation.getByText("the early conversation").isVisible()).toBe(false)
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

  it("shows recall once it is built: its figures, and a search whose hit opens its messages in the Sessions tab", async () => {
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
    await dialog.locator(".hit-passage", { hasText: "user: list the files" }).waitFor()
    expect(await dialog.locator(".hit-passage mark").allTextContents()).toEqual(["files"])
    await dialog.getByRole("button", { name: "Open in Sessions" }).click()
    // The Sessions tab, at the hit's session: its four messages marked, among the newest page around them.
    await dialog.locator(".raw-list .raw-target .raw-index", { hasText: "#116" }).waitFor()
    expect(await dialog.locator(".raw-list .raw-target").count()).toBe(4)
    expect(fixture.requests.some((r) => r.url === "/history?session=s-current&limit=20&before=123")).toBe(true)
    await screenshot(page, "fixture-11-recall-built")
    // The clicked button is gone, so focus fell to the body: Esc still closes the overlay.
    await page.keyboard.press("Escape")
    await dialog.waitFor({ state: "detached" })
  })

  it("shows the segment tree once it is built: figures, token bars, collapsed rollups, summaries as safe markdown, the filter", async () => {
    const before = { segments: json["/segments"], context: json["/context/segments"] }
    json["/segments"] = { body: segmentsAnswer }
    json["/context/segments"] = { body: contextSegmentsAnswer }
    try {
      await page.getByRole("button", { name: "Memory", exact: true }).click()
      const dialog = page.getByRole("dialog", { name: "Memory" })
      await dialog.getByRole("tab", { name: "Segments" }).click()

      // The header: the session's figures, what the cut means, and the next request's tokens as bars.
      await dialog.getByText("messages 0–109 summarized, 110… raw (10 messages)", { exact: false }).waitFor()
      await dialog.getByText("120 messages", { exact: false }).waitFor()
      // Labelled as the server labels the figures: a preview of the next request, before the message that starts it.
      await dialog.getByRole("heading", { name: "Next request (before its message): 24,000 of 100,000 tokens" }).waitFor()
      for (const [part, tokens] of [["system", "6,200"], ["tools", "3,400"], ["summary", "2,300"], ["raw", "12,100"], ["total", "24,000"]]) {
        await dialog.getByRole("img", { name: `${part}: ${tokens} of 100,000 tokens` }).waitFor()
      }
      expect(await dialog.locator(".token-total").textContent()).toContain("24,000 of 100,000 (24%)")
      // Each bar is filled to its share of maxContextTokens.
      const fill = (part: string, tokens: string) =>
        dialog.getByRole("img", { name: `${part}: ${tokens} of 100,000 tokens` }).locator(".bar-fill").getAttribute("width")
      expect(await fill("system", "6,200")).toBe("6.2")
      expect(await fill("total", "24,000")).toBe("24")
      expect(await dialog.locator(".token-breakdown .role-row", { hasText: "summary" }).textContent()).toContain("2,300 of 60,000 allowed")
      // The tool definitions, builtin and MCP apart, and what offering MCP tools by name saved.
      expect(await dialog.locator(".token-breakdown .tools-cost").textContent())
        .toBe(" (builtin 3,100, MCP 300; 120 MCP tools by name, loaded by tool_search: 27,500 saved)")

      // Roots only, newest first; the rolled-up children stay hidden until their parent opens.
      const rows = dialog.locator(".segment-tree > li")
      expect(await rows.evaluateAll((els) => els.map((el) => el.getAttribute("data-segment")))).toEqual(["13", "12", "11"])
      expect(await dialog.locator("[data-segment='1']").count()).toBe(0)
      const row = (id: number) => dialog.locator(`[data-segment='${id}'] > .segment-head`)
      expect(await row(12).textContent()).toContain("15,230 → 980 tokens, 15.5:1")
      expect(await row(11).textContent()).toContain("152,300 → 1,200 tokens, 126.9:1")
      expect(await row(11).textContent()).toContain("L1")
      expect(await row(11).textContent()).toContain("messages 0–99")
      expect(await row(13).textContent()).toContain("messages 110–119")
      expect(await row(13).textContent()).toContain("not summarized yet")
      expect(await row(12).locator(".context-tag").textContent()).toBe("in context")
      expect(await row(13).locator(".context-tag").count()).toBe(0)

      // By keyboard: Enter opens the parent (its summary and its ten children), Space closes it, Enter again opens.
      await row(11).focus()
      await page.keyboard.press("Enter")
      expect(await row(11).getAttribute("aria-expanded")).toBe("true")
      await dialog.locator("[data-segment='11'] > .segment-detail .segment-summary h2", { hasText: "Week one" }).waitFor()
      expect(await dialog.locator("[data-segment='11'] .segment-children > li").count()).toBe(10)
      await page.keyboard.press(" ")
      await expect.poll(() => dialog.locator("[data-segment='1']").count()).toBe(0)
      await page.keyboard.press("Enter")
      await dialog.locator("[data-segment='1']").waitFor()
      expect(await dialog.locator("[data-segment='1'] > .segment-head").getAttribute("aria-expanded")).toBe("false")

      // A child's summary is markdown from a model: rendered, and its injection left inert.
      await row(10).click()
      await dialog.locator("[data-segment='10'] .segment-summary", { hasText: "moved on" }).waitFor()
      expect(await page.evaluate(activeContent(".segment-tree .md"))).toEqual([])
      expect(await page.evaluate("window.segmentPwned")).toBeUndefined()

      await row(12).click()
      const summary = dialog.locator("[data-segment='12'] .segment-summary")
      await summary.locator("h3", { hasText: "Deploy pipeline" }).waitFor()
      expect(await summary.locator("li strong").textContent()).toBe("staging")
      expect(await summary.locator("code").textContent()).toBe("kern status")
      expect(await dialog.locator("[data-segment='12'] .segment-meta").textContent()).toContain("yes: the model gets this summary now")

      await row(13).press("Enter")
      await dialog.locator("[data-segment='13'] .not-summarized").waitFor()
      await row(13).press("Enter")
      await dialog.locator(".panel").evaluate((el) => el.scrollTo(0, 0))
      await screenshot(page, "fixture-13-segments")
      // Its raw messages page in on demand: the segment's ten, nothing before or after.
      await dialog.locator("[data-segment='12']").getByRole("button", { name: "Show the raw messages" }).click()
      await dialog.locator("[data-segment='12'] .raw-index", { hasText: "#100" }).waitFor()
      expect(await dialog.locator("[data-segment='12'] .raw-index").allTextContents()).toEqual(
        Array.from({ length: 10 }, (_, i) => `#${109 - i}`)
      )

      // "In context" lists only what composeHistory injects, newest first.
      await dialog.getByLabel("In context").check()
      await expect.poll(() => dialog.locator("[data-segment='13']").count()).toBe(0)
      expect(await rows.evaluateAll((els) => els.map((el) => el.getAttribute("data-segment")))).toEqual(["12", "11"])
      expect(await dialog.locator("[data-segment='1']").count()).toBe(0)
      await screenshot(page, "fixture-14-segments-in-context")
      await dialog.getByLabel("All").check()
      await dialog.locator("[data-segment='13']").waitFor()

      // At phone width nothing runs off the side.
      await page.setViewportSize({ width: 375, height: 740 })
      await row(11).click()
      await dialog.locator("[data-segment='1']").waitFor()
      const overflow = await page.evaluate("document.querySelector('.panel').scrollWidth - document.querySelector('.panel').clientWidth")
      expect(overflow).toBe(0)
      await screenshot(page, "fixture-15-segments-phone")
      await page.setViewportSize({ width: 1100, height: 800 })
      await page.keyboard.press("Escape")
      await dialog.waitFor({ state: "detached" })
    } finally {
      json["/segments"] = before.segments ?? notBuilt("context")
      json["/context/segments"] = before.context ?? notBuilt("context")
    }
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

  it("shows a failing summarizer in the header: its failures, the fallback cut, and the last error on hover", async () => {
    const badge = page.getByRole("status", { name: /summaries failing/ })
    await badge.getByText("summaries failing (3×), fallback cut", { exact: true }).waitFor()
    const details = await badge.getAttribute("title")
    expect(details).toContain("last error: the summary model failed on messages 0–243: HTTP 404: model not found")
    expect(details).toContain("no summary yet")
    expect(details).toContain("120 messages not summarized yet")
    expect(details).toContain("cut at user messages")
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

  // Chromium 156 also reports, as a blocked "inline event handler", every handler in an inert DOMParser document: the
  // one DOMPurify parses a hostile summary into (the segment tree's `<img onerror>` above). Such a handler never runs
  // (window.segmentPwned stays unset); what must hold is that none reaches the live page, which is checked here.
  it("ran without a CSP violation or an uncaught error; no element of the page carries an inline handler", async () => {
    const inertParse = /^Executing inline event handler violates/
    expect(errors.filter((e) => /Content Security Policy|Uncaught|TypeError|ReferenceError/.test(e) && !inertParse.test(e))).toEqual([])
    const handlers = await page.evaluate(`[...document.querySelectorAll("*")].flatMap((el) =>
      [...el.attributes].filter((attr) => attr.name.startsWith("on")).map((attr) => el.tagName + " " + attr.name))`)
    expect(handlers).toEqual([])
  })

  // Last: Chromium reports the inline styles of the corpus as CSP violations (blocked) while DOMPurify parses them.
  it("sanitizes the markdown it renders: a corpus of script injections leaves nothing active", async () => {
    // One reply per attack: in one reply, an unclosed `<style>` would swallow every attack after it untested.
    attacks.forEach((attack, i) => {
      const turnId = `turn-hostile-${i}`
      fixture.emit({ type: "incoming", turnId, conversationId: "web:web", messageId: turnId, text: "say something nasty", interface: "web", channel: "web", userId: "operator" })
      fixture.emit({ type: "text-delta", turnId, conversationId: "web:web", delta: `${attack}\n\nhostile reply ${i} ends` })
      fixture.emit({ type: "finish", turnId, conversationId: "web:web", reply: "", steps: 1, usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0, costUsdCents: 0 }, delivered: true })
    })
    await page.locator(`article.msg-done`, { hasText: `hostile reply ${attacks.length - 1} ends` }).waitFor()
    await page.locator(`article.msg-done`, { hasText: "cover" }).waitFor()
    // kern's own controls sit around the markdown; inside the rendered replies there is none.
    expect(await page.evaluate(activeContent(".log .md"))).toEqual([])
    expect(await page.evaluate("window.pwned")).toBeUndefined()
    // GFM task lists still render: their boxes and the two the reply wrote itself, all disabled and bare.
    const boxes = await page.evaluate(`[...document.querySelectorAll(".log .md input")].map((el) => el.outerHTML)`)
    expect(boxes).toEqual([
      "<input type=\"checkbox\" disabled=\"\">",
      "<input type=\"checkbox\" checked=\"\" disabled=\"\">",
      "<input type=\"checkbox\" disabled=\"\">",
      "<input type=\"checkbox\" checked=\"\" disabled=\"\">"
    ])
    expect(await page.locator(".log .md li", { hasText: "done" }).locator("input[type=checkbox][checked][disabled]").count()).toBe(1)
  })
})
