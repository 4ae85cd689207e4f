import { describe, expect, it } from "vitest"
import { formatApprovalRequest } from "../../../../src/channels/approvalPrompt.js"
import { neutralizeControls } from "../../../../src/channels/terminalSafe.js"
import { approvalTexts } from "../../../../src/channels/web/ui/approvals.js"
import { forbiddenTags, sanitizeConfig, taskCheckbox } from "../../../../src/channels/web/ui/sanitizeConfig.js"
import type { PendingApproval } from "../../../../src/channels/web/ui/wire.js"

/** Characters that reorder, hide or command what a person reads before approving a call. */
const controls: ReadonlyArray<readonly [string, string]> = [
  ...["\u202a", "\u202b", "\u202c", "\u202d", "\u202e"].map((c) => ["bidi embedding/override", c] as const),
  ...["\u2066", "\u2067", "\u2068", "\u2069"].map((c) => ["bidi isolate", c] as const),
  ["left-to-right mark", "\u200e"],
  ["right-to-left mark", "\u200f"],
  ["Arabic letter mark", "\u061c"],
  ["NUL", "\u0000"],
  ["bell", "\u0007"],
  ["backspace", "\b"],
  ["bare CR", "\r"],
  ["ESC (ANSI)", "\u001b"],
  ["DEL", "\u007f"],
  ["C1 CSI", "\u009b"],
  ["C1 OSC", "\u009d"]
]

const rawControl = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/

const approval = (text: string): PendingApproval => ({
  id: "ap1",
  toolId: `bash${text}`,
  args: { command: `rm -rf ${text}evil${text} ~/`, note: "\x1b[2J\x1b]52;c;ZXZpbA==\x07" },
  reason: `DESTRUCTIVE ${text}call`,
  interface: "telegram",
  channel: `chat${text}`,
  userId: `u${text}`,
  requestedAt: "2026-11-23T08:00:00.000Z",
  expiresAt: "2026-11-23T08:05:00.000Z"
})

describe("control characters in an approval", () => {
  for (const [name, char] of controls) {
    it(`${name} (U+${char.charCodeAt(0).toString(16).padStart(4, "0")}) is shown visibly, never obeyed, in the web dialog`, () => {
      const texts = approvalTexts(approval(char))
      for (const text of Object.values(texts)) expect(text).not.toMatch(rawControl)
      expect(texts.args).toContain("evil")
    })

    it(`${name} is shown visibly in the terminal approval prompt`, () => {
      const a = approval(char)
      const shown = neutralizeControls(formatApprovalRequest({ ...a, expires: "08:05" }))
      expect(shown.replace(/\r\n/g, "\n")).not.toMatch(rawControl)
    })
  }

  it("the U+202E override that turned `evil` into `live` is shown as a marker", () => {
    expect(approvalTexts(approval("\u202e")).args).toContain("<U+202E>evil<U+202E>")
  })

  it("ordinary text, emoji and right-to-left script pass unchanged", () => {
    const text = "مرحبا 漢字 👨‍👩‍👧 é"
    expect(approvalTexts(approval(text)).args).toContain(`${text}evil${text}`)
  })
})

describe("the reply sanitizer's configuration", () => {
  // The DOM part (DOMPurify applying it) is exercised in Chromium by ui.fixture.browser.test.ts.
  const corpus = ["button", "form", "select", "option", "textarea", "iframe", "object", "embed", "style", "meta", "link", "base", "svg", "math"]

  it("forbids every element that could pass for kern's controls, load another page or restyle this one", () => {
    for (const tag of corpus) expect(forbiddenTags).toContain(tag)
    expect(sanitizeConfig.FORBID_TAGS).toEqual([...forbiddenTags])
    expect(sanitizeConfig.USE_PROFILES).toEqual({ html: true })
    for (const attr of ["style", "formaction", "action", "srcdoc"]) expect(sanitizeConfig.FORBID_ATTR).toContain(attr)
  })

  const attrs = (html: string) =>
    [...html.matchAll(/([\w-]+)(?:="([^"]*)")?/g)].map(([, name, value]) => ({ name: name!, value: value ?? "" }))

  it("an input stays only as a task list's checkbox: disabled, its state kept, nothing else on it", () => {
    // Forbidding input whole (as before) hid every `- [ ] todo` box; taskCheckbox decides instead (renderMarkdown's hook).
    expect(sanitizeConfig.FORBID_TAGS).not.toContain("input")
    // As marked renders `- [ ] todo` and `- [x] done`.
    expect(taskCheckbox(attrs("disabled type=\"checkbox\""))).toEqual([{ name: "type", value: "checkbox" }, { name: "disabled", value: "" }])
    expect(taskCheckbox(attrs("checked disabled type=\"checkbox\""))).toEqual([
      { name: "type", value: "checkbox" },
      { name: "checked", value: "" },
      { name: "disabled", value: "" }
    ])
    // A checkbox a reply wrote itself: enabled, named, in a form, styled, with a handler: only its state survives.
    expect(taskCheckbox(attrs(
      "type=\" CheckBox \" name=\"approve\" value=\"yes\" form=\"f\" formaction=\"javascript:x\" onclick=\"x\" style=\"position:fixed\" id=\"a\" class=\"b\" autofocus"
    ))).toEqual([{ name: "type", value: "checkbox" }, { name: "disabled", value: "" }])
    // Every other input is dropped: text fields, buttons, images, files, hidden values, radios, one without a type.
    for (
      const type of ["text", "submit", "button", "reset", "image", "file", "hidden", "password", "radio", "email", "range", "color", "checkbox2", ""]
    ) expect(taskCheckbox(attrs(`type="${type}" value="Approve"`)), type).toBeUndefined()
    expect(taskCheckbox(attrs("value=\"Approve\""))).toBeUndefined()
  })
})
