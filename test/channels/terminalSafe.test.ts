import { assert, describe, it } from "@effect/vitest"
import { neutralizeControls } from "../../src/channels/terminalSafe.js"
import { showEvent } from "../../src/channels/terminalFormat.js"
import { DateTime } from "effect"

/** Text a model, a tool or a fetched page could put in front of the operator's terminal. */
const attacks: ReadonlyArray<readonly [string, string, string]> = [
  ["OSC 52 clipboard write", "copy \x1b]52;c;cm0gLXJmIH4=\x07 done", "copy ^[]52;c;cm0gLXJmIH4=^G done"],
  ["OSC 52 ended by ST", "\x1b]52;c;ZXZpbA==\x1b\\", "^[]52;c;ZXZpbA==^[\\"],
  ["screen clear and home", "\x1b[2J\x1b[Hclean", "^[[2J^[[Hclean"],
  ["cursor moves", "a\x1b[5A\x1b[10;20Hb\x1b[K", "a^[[5A^[[10;20Hb^[[K"],
  ["window title", "\x1b]0;pwned\x07", "^[]0;pwned^G"],
  ["bare CR overwrite", "rm -rf ~\rls -la   ", "rm -rf ~^Mls -la   "],
  ["backspace overwrite", "curl evil.sh\b\b\b\b\b\b\b\bok", "curl evil.sh^H^H^H^H^H^H^H^Hok"],
  ["C1 CSI", "\u009b2Jx", "M-^[2Jx"],
  ["C1 OSC ended by C1 ST", "\u009d0;title\u009c", "M-^]0;titleM-^\\"],
  ["DEL and NUL", "a\x7fb\x00c", "a^?b^@c"],
  ["right-to-left override", "file\u202etxt.exe", "file<U+202E>txt.exe"],
  ["bidi isolates", "\u2066if admin\u2069 {", "<U+2066>if admin<U+2069> {"],
  ["vertical tab and form feed", "a\x0bb\x0cc", "a^Kb^Lc"]
]

const rawControl = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

describe("terminal text", () => {
  for (const [name, text, shown] of attacks) {
    it(`${name} is shown, not obeyed`, () => {
      const out = neutralizeControls(text)
      assert.strictEqual(out, shown)
      assert.notMatch(out.replace(/\r\n/g, "\n"), rawControl)
    })
  }

  it("newlines, tabs, CRLF line ends and ordinary UTF-8 pass unchanged", () => {
    for (const text of [
      "line one\nline two\n\tindented\n",
      "windows\r\nline ends\r\n",
      "emoji 👍🏽 👨‍👩‍👧 🇫🇷, CJK 漢字 かな 한국어, accents é ü ñ, Arabic مرحبا, math ∑ → ≠",
      "box ┌─┐ │x│ └─┘ and a zero-width joiner\u200d inside",
      ""
    ]) assert.strictEqual(neutralizeControls(text), text)
  })

  it("every control character but newline and tab is replaced, whatever surrounds it", () => {
    for (let code = 0; code < 0xa0; code++) {
      if (code === 9 || code === 10 || (code >= 0x20 && code < 0x7f)) continue
      const out = neutralizeControls(`x${String.fromCharCode(code)}y`)
      assert.notMatch(out, rawControl, `U+${code.toString(16)}`)
    }
  })

  it("the terminal's lines for streamed text, tool calls, failed results and errors carry no raw control", () => {
    const ids = { turnId: "1", conversationId: "web:web" }
    const zone = DateTime.zoneUnsafeMakeNamed("UTC")
    const events = [
      showEvent({ type: "text-delta", ...ids, delta: "\x1b]52;c;ZXZpbA==\x07hi" }, zone),
      showEvent({ type: "tool-call", ...ids, id: "c1", name: "bash", params: { command: "echo \x1b[2J" } }, zone),
      showEvent({ type: "tool-result", ...ids, id: "c1", name: "bash", isError: true, text: "boom \x1b]0;title\x07", durationMs: 1 }, zone),
      showEvent({
        type: "error",
        ...ids,
        message: "provider said \u009b2J",
        failure: { _tag: "ProviderFailed", reason: "provider", message: "provider said \u009b2J" }
      }, zone),
      showEvent({ type: "incoming", ...ids, messageId: "1", text: "\x1b[2Jhi", interface: "web", channel: "web", userId: "operator" }, zone)
    ]
    for (const line of events) assert.notMatch(neutralizeControls(line), rawControl)
    assert.strictEqual(neutralizeControls(events[2] ?? ""), "  ✗ bash: boom ^[]0;title^G\n")
  })
})
