import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { HistoryItem } from "../../../src/channels/web/api.js"
import { launchChromium, screenshot, screenshotDir, watchPageErrors } from "../../support/browser.js"
import { startWebUiFixture, type WebUiFixture } from "../../support/webUiFixture.js"

// Every screen of the web UI, at desktop (1280×800) and phone (390×844) width, saved to test-output/ui/ as
// <size>-<nn>-<screen>.png for a reviewer to look at: the login (logged out), the chat (a conversation with a code
// block, tool rows ok, failed and denied, a channel user by name), an open tool row, the approval dialog, and each
// tab of the Memory overlay, the Schedules view. Each is taken once the screen shows what it is for.

type Message = HistoryItem["message"]
const at = "2026-11-23T08:00:00.000Z"
const user = (text: string, envelope?: { interface: string; channel: string; userId: string }): Message =>
  ({ _tag: "user", text, at, ...(envelope === undefined ? {} : { envelope: { ...envelope, time: at } }) }) as Message
const assistant = (text: string, toolCalls: ReadonlyArray<{ id: string; name: string; params: unknown }> = []): Message =>
  ({ _tag: "assistant", text, toolCalls, at }) as Message
const tool = (id: string, name: string, result: string, isError: boolean): Message =>
  ({ _tag: "tool", toolCallId: id, toolName: name, isError, result, at }) as Message

const history: ReadonlyArray<Message> = [
  user("what did we change on the router yesterday?"),
  assistant("We moved the **DHCP range** to `.100–.199` and pointed DNS at the pi-hole."),
  user("can you check the backups are running?", { interface: "slack", channel: "D0000000001", userId: "U0000000001" }),
  assistant("", [
    { id: "c1", name: "bash", params: { command: "systemctl status restic-backup.timer" } },
    { id: "c2", name: "read", params: { path: "/var/log/restic.log" } },
    { id: "c3", name: "bash", params: { command: "rm -rf /var/cache/restic" } }
  ]),
  tool("c1", "bash", "● restic-backup.timer - nightly backup\n   Active: active (waiting) since Sun 2026-11-22 02:00:00 UTC", false),
  tool("c2", "read", "NOT_FOUND: /var/log/restic.log does not exist", true),
  tool("c3", "bash", "PERMISSION_DENIED: bash is DESTRUCTIVE and needs approval, which was refused (web: denied by the operator)", true),
  assistant([
    "The timer is active; the last run was at 02:00. To see its log:",
    "",
    "```sh",
    "journalctl -u restic-backup.service --since yesterday | tail -n 20",
    "```",
    "",
    "| job | schedule | last run |",
    "|---|---|---|",
    "| restic | nightly 02:00 | ok |"
  ].join("\n"))
]

const segment = (id: number, level: number, start: number, end: number, parentId: number | null, summary: string | null, inContext: boolean) => ({
  id,
  level,
  start,
  end,
  tokens: (end - start) * 1500,
  summaryTokens: summary === null ? 0 : 400,
  summary,
  firstAt: at,
  lastAt: at,
  parentId,
  inContext
})
const segments = [
  segment(1, 0, 0, 10, 3, "Set up the router and the pi-hole.", false),
  segment(2, 0, 10, 20, 3, "Moved the DHCP range; DNS on the pi.", false),
  segment(3, 1, 0, 20, null, "## Week one\nNetwork set up: router, **pi-hole**, DHCP.", true),
  segment(4, 0, 20, 30, null, "Checked the backups: restic timer active.", true),
  segment(5, 0, 30, 34, null, null, false)
]

const json: Record<string, { readonly status?: number; readonly body: unknown }> = {
  "/status": { body: { name: "home-agent", channels: [{ interface: "slack", state: "connected", detail: "", since: at }] } },
  "/approvals": { body: { approvals: [] } },
  "/users": { body: { users: [{ interface: "slack", userId: "U0000000001", chatId: "D0000000001", name: "Ada Lovelace", role: "user" }] } },
  "/sessions": {
    body: {
      currentSessionId: "s-current",
      sessions: [
        { id: "s-old", createdAt: "2026-11-20T08:00:00.000Z", messages: 12, bytes: 4096, modifiedAt: "2026-11-20T09:10:00.000Z", current: false },
        { id: "s-current", createdAt: "2026-11-22T08:00:00.000Z", messages: history.length, bytes: 50000, modifiedAt: at, current: true }
      ]
    }
  },
  "/sessions/s-current/activity": {
    body: {
      sessionId: "s-current",
      total: history.length,
      roles: { user: 2, assistant: 3, tool: 3 },
      daily: [{ date: "2026-11-22", count: 3 }, { date: "2026-11-23", count: 5 }],
      hourly: Array.from({ length: 24 }, (_, hour) => ({ hour, count: (hour * 7) % 5 }))
    }
  },
  "/segments": { body: { sessionId: "s-current", messages: 34, cut: 30, segments } },
  "/context/segments": {
    body: {
      request: "next",
      leftOut: ["the next turn's own message", "a paired user's turn is offered only their scope's tools (these figures count the operator's)"],
      sessionId: "s-current",
      messages: 34,
      cut: 30,
      budget: { maxContextTokens: 100000, summary: 60000, raw: 20000 },
      tokens: { system: 6200, tools: 3400, summary: 800, raw: 6000, total: 16400 },
      injected: segments.filter((s) => s.inContext)
    }
  },
  "/context/system": {
    body: {
      request: "next",
      sections: [
        { kind: "preamble", source: "kern", text: "You are home-agent, a kern agent.", chars: 33, tokens: 9 },
        { kind: "file", source: "AGENTS.md", text: "<document path=\"AGENTS.md\">\nKeep answers short.\n</document>", chars: 60, tokens: 15 },
        { kind: "tools", source: "tools", text: "<tools>\nbash: Run a command.\nread: Read a file.\n</tools>", chars: 54, tokens: 14 }
      ],
      totalChars: 147,
      totalTokens: 38
    }
  },
  "/notes/summary": { body: { summary: { text: "Set up the network; the backups run nightly.", sources: ["notes/2026-11-22.md"], fresh: true } } },
  "/notes": {
    body: {
      notes: [
        { path: "notes/2026-11-23.md", date: "2026-11-23", text: "## Today\n- checked the **restic** timer\n- Ada asked about backups" },
        { path: "notes/2026-11-22.md", date: "2026-11-22", text: "- moved the DHCP range" }
      ],
      total: 2
    }
  },
  "/schedules": {
    body: {
      schedules: [
        {
          id: 1, kind: "cron", when: "30 7 * * 1-5", timezone: "Europe/Berlin", prompt: "Check the restic backups and tell me if any failed.",
          misfire: "skip", deliverTo: null, createdBy: "operator", next: "2026-11-24T07:30:00+01:00", nextDueMs: Date.UTC(2026, 10, 24, 6, 30),
          fired: 12, missed: 2, lastFired: "2026-11-23T07:30:00+01:00", lastMissed: "2026-11-20T07:30:00+01:00"
        },
        {
          id: 2, kind: "at", when: "2026-12-01T09:00:00+00:00", timezone: "UTC", prompt: "Remind Ada to renew the domain.",
          misfire: "once", deliverTo: "slack:U0000000001", createdBy: "operator", next: "2026-12-01T09:00:00+00:00", nextDueMs: Date.UTC(2026, 11, 1, 9),
          fired: 0, missed: 0, lastFired: null, lastMissed: null
        }
      ]
    }
  },
  "/recall/stats": { body: { messages: 46, chunks: 9, unembedded: 0, sessions: 2, files: 2, from: "2026-11-20T08:00:00.000Z", to: at, backfillRunning: false } },
  "/recall/search": {
    body: {
      query: "dhcp",
      mode: "keyword",
      hits: [{
        source: "session",
        sessionId: "s-current",
        path: null,
        messageStart: 0,
        messageEnd: 1,
        startedAt: at,
        endedAt: at,
        distance: null,
        score: 0.01639344262295082,
        text: "user: what did we change on the router yesterday?\nassistant: We moved the **DHCP range** to `.100–.199` and pointed DNS at the pi-hole."
      }, {
        source: "file",
        sessionId: null,
        path: "notes/2026-11-22.md",
        messageStart: 0,
        messageEnd: 0,
        startedAt: "2026-11-22T00:00:00.000Z",
        endedAt: "2026-11-22T00:00:00.000Z",
        distance: null,
        score: 0.016,
        text: "- moved the DHCP range"
      }]
    }
  }
}

/** A PNG's width and height, from its IHDR chunk. */
const pngSize = (path: string) => {
  const head = NodeFs.readFileSync(path).subarray(0, 24)
  return { signature: head.subarray(1, 4).toString("latin1"), width: head.readUInt32BE(16), height: head.readUInt32BE(20) }
}

const sizes = [
  { name: "desktop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 844 }
] as const

describe("the web UI's screens, as pictures", () => {
  let browser: Browser
  let fixture: WebUiFixture

  beforeAll(async () => {
    fixture = await startWebUiFixture({ history, sessions: { "s-current": history }, json })
    browser = await launchChromium()
  })

  afterAll(async () => {
    await browser?.close()
    await fixture?.close()
  })

  for (const size of sizes) {
    it(`saves every screen at ${size.name} width (${size.width}×${size.height})`, async () => {
      const shots: Array<string> = []
      const shoot = async (page: Page, name: string) => {
        // Fonts and layout settled: the next two frames are drawn.
        await page.evaluate("new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))")
        shots.push(await screenshot(page, `${size.name}-${String(shots.length + 1).padStart(2, "0")}-${name}`))
      }

      // Logged out: the page without a session cookie.
      const outside = await browser.newPage({ viewport: { width: size.width, height: size.height } })
      await outside.goto(fixture.url)
      await outside.getByText("logged out", { exact: true }).waitFor()
      // Nothing below can be said while logged out: the empty log does not invite it.
      expect(await outside.getByText("Say something below", { exact: false }).count()).toBe(0)
      await shoot(outside, "login")
      await outside.close()

      const page = await browser.newPage({ viewport: { width: size.width, height: size.height } })
      const errors = watchPageErrors(page)
      // The fixture takes each ticket once: this login gets a ticket of its own.
      const ticket = fixture.newTicket()
      await page.goto(`${fixture.url}/auth?ticket=${ticket}`)
      await page.getByText("connected", { exact: true }).waitFor()
      await page.locator("figure.code-block .code-lang", { hasText: "sh" }).waitFor()
      await page.locator(".who", { hasText: "Ada Lovelace · slack" }).waitFor()
      await shoot(page, "chat")

      await page.locator("details.tool-denied summary").click()
      await page.locator("details.tool-denied .tool-output").waitFor()
      await page.locator("details.tool-denied").scrollIntoViewIfNeeded()
      await shoot(page, "tool-rows")

      fixture.emit({
        type: "approval",
        id: `apr_${size.name}`,
        toolId: "bash",
        args: { command: "rm -rf /var/cache/restic" },
        reason: "bash is DESTRUCTIVE",
        interface: "slack",
        channel: "D0000000001",
        userId: "U0000000001",
        requestedAt: new Date().toISOString(),
        expiresAt: new Date(Date.now() + 300_000).toISOString()
      })
      const approval = page.getByRole("alertdialog")
      await approval.getByRole("button", { name: "Deny" }).waitFor()
      expect(await approval.locator(".approval-origin").textContent()).toBe("Ada Lovelace · slack, user U0000000001")
      await shoot(page, "approval")
      fixture.emit({ type: "approval-resolved", id: `apr_${size.name}`, approved: false, outcome: "denied", by: "web" })
      await approval.waitFor({ state: "detached" })

      await page.getByRole("button", { name: "Memory", exact: true }).click()
      const dialog = page.getByRole("dialog", { name: "Memory" })
      const tab = (name: string) => dialog.getByRole("tab", { name })
      await dialog.locator(".session.live button.session-head").click()
      await dialog.getByRole("img", { name: "Messages per hour of day" }).waitFor()
      // The charts' labels never print over each other.
      const overlaps = await page.evaluate(`[...document.querySelectorAll(".columns")].flatMap((chart) => {
        const boxes = [...chart.querySelectorAll(".col-label")].map((label) => label.getBoundingClientRect())
        return boxes.slice(1).flatMap((box, i) => box.left < boxes[i].right ? [chart.getAttribute("aria-label")] : [])
      })`)
      expect(overlaps).toEqual([])
      await shoot(page, "memory-sessions")

      await tab("Segments").click()
      await dialog.locator(".segment").first().waitFor()
      await shoot(page, "memory-segments")

      await tab("Notes").click()
      await dialog.locator("details.daily-note h2", { hasText: "Today" }).waitFor()
      await dialog.getByText("Set up the network; the backups run nightly.").waitFor()
      await shoot(page, "memory-notes")

      await tab("Recall").click()
      await dialog.getByRole("searchbox", { name: "Search past conversations" }).fill("dhcp")
      await dialog.getByRole("searchbox", { name: "Search past conversations" }).press("Enter")
      await dialog.locator(".hit-passage mark").first().waitFor()
      await shoot(page, "memory-recall")

      await dialog.getByRole("button", { name: "Open in Sessions" }).click()
      await dialog.locator(".raw-list .raw-target").first().waitFor()
      await shoot(page, "memory-recall-opened")

      await tab("Context").click()
      await dialog.getByText("3 sections", { exact: false }).waitFor()
      await shoot(page, "memory-context")
      await page.keyboard.press("Escape")

      await page.getByRole("button", { name: "Schedules", exact: true }).click()
      const schedules = page.getByRole("dialog", { name: "Schedules" })
      await schedules.getByRole("listitem", { name: "Schedule 2" }).waitFor()
      await schedules.getByText("2 (last due 2026-11-20 07:30 +01:00)").waitFor()
      await shoot(page, "schedules")
      await page.keyboard.press("Escape")
      await page.close()

      for (const path of shots) {
        expect(pngSize(path), NodePath.basename(path)).toEqual({ signature: "PNG", width: size.width, height: size.height })
      }
      expect(shots.map((path) => NodePath.dirname(path))).toEqual(shots.map(() => screenshotDir))
      expect(errors.filter((e) => /Content Security Policy|Uncaught|TypeError|ReferenceError/.test(e))).toEqual([])
    })
  }
})
