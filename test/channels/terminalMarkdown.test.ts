import { assert, describe, it } from "@effect/vitest"
import { makeMarkdownStream } from "../../src/channels/terminalMarkdown.js"
import { neutralizeControls } from "../../src/channels/terminalSafe.js"

const esc = "\u001b"
const sgr = /\u001b\[[0-9;]*m/g
const plain = (text: string) => text.replace(sgr, "")

/** The whole text through the renderer, delta by delta, then flushed: what the TUI writes for a reply. */
const render = (text: string, deltas: ReadonlyArray<string> = [text]) => {
  const stream = makeMarkdownStream(true)
  return deltas.map(stream.push).join("") + stream.flush()
}

const reply = [
  "# Plan",
  "Some **bold** and *italic* text with `npm test` and [the docs](https://example.com/docs).",
  "- first",
  "- second with **weight**",
  "1. one",
  "> a quote",
  "```ts",
  "const a = **not bold**",
  "```",
  "| name | size |",
  "|---|---:|",
  "| a | 1 |",
  "| longer | 22 |",
  "after the table"
].join("\n")

describe("markdown in the terminal", () => {
  it("bold, italics, code, lists, quotes, links, fences and aligned tables are styled; their markers are gone", () => {
    const out = render(reply)
    assert.include(out, `${esc}[1mPlan${esc}[0m\n`)
    assert.include(out, `${esc}[1mbold${esc}[0m`)
    assert.include(out, `${esc}[3mitalic${esc}[0m`)
    assert.include(out, `${esc}[36mnpm test${esc}[0m`)
    assert.include(out, `the docs (${esc}[4mhttps://example.com/docs${esc}[0m)`)
    const shown = plain(out)
    assert.include(shown, "• first\n• second with weight\n1. one\n")
    assert.include(shown, "│ a quote\n")
    // A fence's content is code, as written: no inline styles inside.
    assert.include(out, `${esc}[36m  const a = **not bold**${esc}[0m\n`)
    assert.notInclude(shown, "```")
    assert.include(shown, "name    │  size\n")
    assert.include(shown, "a       │  1\nlonger  │  22\n")
    assert.notInclude(shown, "|---|")
    assert.include(shown, "after the table")
    assert.notInclude(shown, "**bold**")
  })

  it("streamed one character at a time it renders the same, each line as soon as it is complete", () => {
    assert.strictEqual(render(reply, [...reply]), render(reply))
    const stream = makeMarkdownStream(true)
    assert.strictEqual(stream.push("Hello **wor"), "")
    assert.strictEqual(stream.push("ld**\nnext"), `Hello ${esc}[1mworld${esc}[0m\n`)
    // A table waits for its last row: its columns depend on every row.
    assert.strictEqual(stream.push(" line\n| a | b |\n|---|---|\n"), "next line\n")
    assert.include(plain(stream.push("| c | d |\ndone\n")), "a  │  b\n")
    assert.strictEqual(stream.flush(), "")
  })

  it("piped or under NO_COLOR the text passes as written", () => {
    const stream = makeMarkdownStream(false)
    assert.strictEqual(stream.push(reply) + stream.flush(), reply)
  })

  /** Control sequences in a reply, placed where markdown gives them a role. */
  const attacks = [
    "\x1b]52;c;ZXZpbA==\x07",
    "\x1b[2J\x1b[H",
    "\x1b]0;pwned\x07",
    "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
    "\u009b2J",
    "\u009d0;t\u009c",
    "rm -rf ~\rls",
    "a\bb\x7f",
    "\u202etxt.exe",
    "&#27;[2J",
    "&#x1b;]0;t&#x07;",
    "&#155;2J"
  ]
  const places = [
    (x: string) => `**${x}**`,
    (x: string) => `*${x}*`,
    (x: string) => `\`${x}\``,
    (x: string) => `# ${x}`,
    (x: string) => `- ${x}`,
    (x: string) => `> ${x}`,
    (x: string) => `[${x}](https://a.example/${x})`,
    (x: string) => `<https://a.example/${x}>`,
    (x: string) => `\`\`\`\n${x}\n\`\`\``,
    (x: string) => `| ${x} | b |\n|---|---|\n| c | ${x} |`,
    (x: string) => `~~${x}~~`,
    (x: string) => x
  ]
  const rawControl = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

  it("a reply's control sequences never reach the terminal as controls, wherever markdown puts them", () => {
    for (const attack of attacks) {
      for (const place of places) {
        const text = place(attack)
        const out = render(neutralizeControls(text), [...neutralizeControls(text)])
        assert.notMatch(out.replace(sgr, ""), rawControl, JSON.stringify(text))
      }
    }
  })
})
