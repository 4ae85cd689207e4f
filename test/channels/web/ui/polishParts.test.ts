import { describe, expect, it } from "@effect/vitest"
import { Marked } from "marked"
import { codeLanguage, markdownBlocks } from "../../../../src/channels/web/ui/markdownBlocks.js"
import { regenerateFeedback } from "../../../../src/channels/web/ui/memory/regenerateFeedback.js"
import { passage, passageChars, queryWords } from "../../../../src/channels/web/ui/memory/passage.js"
import { deniedReason, toolState } from "../../../../src/channels/web/ui/toolState.js"
import { approvalTexts } from "../../../../src/channels/web/ui/approvals.js"
import { decodeUsers, senderLabel, unknownSender } from "../../../../src/channels/web/ui/userNames.js"
import type { PendingApproval } from "../../../../src/channels/web/ui/wire.js"

// The web UI's small rules, pure: code blocks apart from the markdown, a tool row's state, users by name, a recall
// hit's passage, what Regenerate says. The browser test (ui.polish.browser.test.ts) shows them on the page.

const marked = new Marked({ gfm: true, breaks: true, async: false })
const html = (text: string) => markdownBlocks(marked, text, (tokens) => marked.parser(tokens))

describe("markdownBlocks", () => {
  it("keeps top-level code blocks apart, as the text between the fences, with the fence's language", () => {
    const blocks = html("Run this:\n\n```ts {1}\nconst a = \"<b>&amp;</b>\"\n```\n\nthen [docs][d].\n\n    indented code\n\n[d]: https://example.com")
    expect(blocks.map((b) => b.kind)).toEqual(["html", "code", "html", "code"])
    expect(blocks[1]).toEqual({ kind: "code", lang: "ts", text: "const a = \"<b>&amp;</b>\"" })
    // The reference link resolves in the run after the code block.
    expect(blocks[2]).toMatchObject({ kind: "html", html: expect.stringContaining("href=\"https://example.com\"") })
    expect(blocks[3]).toEqual({ kind: "code", lang: "", text: "indented code" })
  })

  it("leaves code inside a list to the markdown, and a reply without code as one block", () => {
    expect(html("- a\n\n  ```sh\n  ls\n  ```").map((b) => b.kind)).toEqual(["html"])
    expect(html("just **text**")).toEqual([{ kind: "html", html: "<p>just <strong>text</strong></p>\n" }])
    expect(html("")).toEqual([])
  })

  it("takes the fence's first word as the language", () => {
    expect(codeLanguage(undefined)).toBe("")
    expect(codeLanguage("  python  title=x ")).toBe("python")
    expect(codeLanguage("\"><img src=x onerror=alert(1)>")).toBe("\"><img")
  })
})

describe("toolState", () => {
  it("says denied for a refused call, failed for a failure, ok, running", () => {
    expect(toolState(undefined)).toBe("running")
    expect(toolState({ text: "AGENTS.md", isError: false })).toBe("ok")
    expect(toolState({ text: "TIMEOUT: bash took longer than 120 s", isError: true })).toBe("failed")
    const refused = { text: "PERMISSION_DENIED: bash is DESTRUCTIVE and needs approval, which was refused (web: no)", isError: true }
    expect(toolState(refused)).toBe("denied")
    expect(deniedReason(refused)).toBe("bash is DESTRUCTIVE and needs approval, which was refused (web: no)")
    expect(deniedReason({ text: "TIMEOUT: x", isError: true })).toBeUndefined()
    // An output that happens to start so, of a call that succeeded, is not a denial.
    expect(toolState({ text: "PERMISSION_DENIED: quoted", isError: false })).toBe("ok")
  })
})

describe("user names", () => {
  const names = decodeUsers({
    users: [
      { interface: "slack", userId: "U0000000001", chatId: "D0000000001", name: "Ada Lovelace", role: "user" },
      { interface: "telegram", userId: "42", chatId: "42", name: "  ", role: "operator" },
      { interface: "telegram", userId: "7", chatId: "7", name: "<img src=x onerror=alert(1)>", role: "user" }
    ]
  })

  it("names a channel user by name, by their user or their chat, and falls back to the channel and chat", () => {
    expect(names).toBeDefined()
    const known = names ?? new Map()
    expect(senderLabel(known, { interface: "slack", channel: "D0000000001", userId: "U0000000001" })).toBe("Ada Lovelace · slack")
    expect(senderLabel(known, { interface: "slack", channel: "D0000000001" })).toBe("Ada Lovelace · slack")
    expect(senderLabel(known, { interface: "telegram", channel: "42", userId: "42" })).toBe("telegram · 42")
    expect(senderLabel(known, { interface: "telegram", channel: "telegram" })).toBe("telegram")
    // A name is data: the label carries it as it is, for the page to render as text.
    expect(senderLabel(known, { interface: "telegram", channel: "7", userId: "7" })).toBe("<img src=x onerror=alert(1)> · telegram")
  })

  it("asks again for a sender it does not know, never for the web's own", () => {
    const known = names ?? new Map()
    expect(unknownSender(known, { interface: "slack", userId: "U0000000001" })).toBe(false)
    expect(unknownSender(known, { interface: "slack", userId: "U0000000002" })).toBe(true)
    expect(unknownSender(known, { interface: "web", userId: "operator" })).toBe(false)
  })

  it("names the user an approval's turn came from, their id beside the name, a bidi override shown visibly", () => {
    const approval = (iface: string, channel: string, userId: string): PendingApproval => ({
      id: "apr_1",
      toolId: "bash",
      args: {},
      reason: "bash is DESTRUCTIVE",
      interface: iface,
      channel,
      userId,
      requestedAt: "2026-11-23T08:00:00.000Z",
      expiresAt: "2026-11-23T08:05:00.000Z"
    })
    const known = names ?? new Map()
    expect(approvalTexts(approval("slack", "D0000000001", "U0000000001"), known).origin).toBe("Ada Lovelace · slack, user U0000000001")
    expect(approvalTexts(approval("slack", "D0000000009", "U0000000009"), known).origin).toBe("slack · D0000000009, user U0000000009")
    const tricky = decodeUsers({ users: [{ interface: "slack", userId: "U1", chatId: "D1", name: "Ada\u202egnp.exe", role: "user" }] }) ?? new Map()
    expect(approvalTexts(approval("slack", "D1", "U1"), tricky).origin).not.toContain("\u202e")
  })

  it("refuses an answer that is not a user list", () => {
    expect(decodeUsers({ error: "not found" })).toBeUndefined()
    expect(decodeUsers(null)).toBeUndefined()
  })
})

describe("passage", () => {
  it("marks the query's words, case-insensitively, in the passage around the first match", () => {
    const text = `${"filler words here. ".repeat(30)}\nuser: where does the Heron nest?\nassistant: by the old mill, the heron nests.`
    const pieces = passage(text, "heron MILL")
    const shown = pieces.map((p) => p.text).join("")
    expect(shown.startsWith("…")).toBe(true)
    expect(shown).toContain("user: where does the Heron nest?")
    expect(pieces.filter((p) => p.match).map((p) => p.text)).toEqual(["Heron", "mill", "heron"])
    expect(shown.length).toBeLessThanOrEqual(passageChars + 2)
  })

  it("shows the start when no word matches (a vector hit), and treats the query's symbols as text", () => {
    expect(passage("short text", "zebra")).toEqual([{ text: "short text", match: false }])
    expect(passage("a (bb) c", "(bb)")).toEqual([{ text: "a (", match: false }, { text: "bb", match: true }, { text: ") c", match: false }])
    expect(queryWords("a .* heron he")).toEqual(["heron", "he"])
  })
})

describe("regenerateFeedback", () => {
  const summary = { text: "s", sources: ["notes/2026-01-01.md"], fresh: true }
  it("says what Regenerate came to", () => {
    expect(regenerateFeedback({ _tag: "Ok", value: { summary } }, 2, "10:00:00")).toEqual({ text: "Regenerated at 10:00:00 from 1 note.", failed: false })
    expect(regenerateFeedback({ _tag: "Ok", value: { summary: null } }, 1, "10:00:00").text).toBe(
      "Nothing to summarize yet: the summary covers the daily notes before the latest one. There is one daily note (shown below)."
    )
    expect(regenerateFeedback({ _tag: "Ok", value: { summary: { ...summary, fresh: false } } }, 3, "10:00:00").failed).toBe(true)
    expect(regenerateFeedback({ _tag: "Failed", status: 500, message: "boom (500)" }, 3, "t")).toEqual({ text: "Could not regenerate: boom (500)", failed: true })
  })
})
