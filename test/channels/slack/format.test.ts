import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { escapeSlack, toMrkdwn, unescapeSlack } from "../../../src/channels/slack/mrkdwn.js"
import { chunkLimit, renderPiece, splitMessage, splitPieces } from "../../../src/channels/slack/split.js"
import { decodeTarget, encodeTarget } from "../../../src/channels/slack/target.js"

const fences = (text: string) => text.split("```").length - 1

/** Replies as models write them: words, lines, paragraphs and fenced code blocks (a fence always starts a line). */
const word = fc.stringMatching(/^[a-zA-Z0-9&<>*_.,!?-]{1,12}$/)
const line = fc.array(word, { minLength: 1, maxLength: 14 }).map((words) => words.join(" "))
const paragraph = fc.array(line, { minLength: 1, maxLength: 5 }).map((lines) => lines.join("\n"))
const codeBlock = fc.array(line, { minLength: 1, maxLength: 30 }).map((lines) => "```ts\n" + lines.join("\n") + "\n```")
const reply = fc.array(fc.oneof(paragraph, paragraph, codeBlock), { minLength: 1, maxLength: 25 }).map((blocks) => blocks.join("\n\n"))
const limit = fc.integer({ min: 40, max: 600 })

describe("Slack formatting", () => {
  it("the splitter cuts replies into chunks no longer than the limit, with every code block closed, losing nothing", () => {
    fc.assert(
      fc.property(reply, limit, (text, max) => {
        const pieces = splitPieces(text, max)
        expect(pieces.map((piece) => piece.body).join("")).toBe(text)
        for (const piece of pieces) {
          const chunk = renderPiece(piece)
          expect(chunk.length).toBeLessThanOrEqual(max)
          expect(fences(chunk) % 2).toBe(0)
        }
        for (const chunk of splitMessage(text, max)) {
          expect(chunk.length).toBeLessThanOrEqual(max)
          expect(chunk.trim()).toBe(chunk)
          expect(chunk).not.toBe("")
        }
      }),
      { numRuns: 300 }
    )
  })

  it("a code block that fits in a chunk is never cut, and cuts fall at paragraph, line or word boundaries", () => {
    fc.assert(
      fc.property(reply, limit, (text, max) => {
        const blocks = [...text.matchAll(/```[\s\S]*?```/g)].map((match) => match[0])
        fc.pre(blocks.every((block) => block.length <= max / 2))
        const pieces = splitPieces(text, max)
        expect(pieces.every((piece) => !piece.reopened && !piece.closed)).toBe(true)
        let at = 0
        for (const piece of pieces.slice(0, -1)) {
          at += piece.body.length
          expect(/\s/.test(text[at]!)).toBe(true)
        }
      }),
      { numRuns: 300 }
    )
  })

  it("any text at all: chunks within the limit whose bodies join back to it", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 3000, unit: "grapheme" }), limit, (text, max) => {
        const pieces = splitPieces(text, max)
        expect(pieces.map((piece) => piece.body).join("")).toBe(text)
        for (const piece of pieces) expect(renderPiece(piece).length).toBeLessThanOrEqual(max)
      }),
      { numRuns: 300 }
    )
  })

  it("prefers a paragraph break, then a line break, over cutting mid-line", () => {
    const first = "a".repeat(60)
    const text = `${first}\n\n${"b ".repeat(30)}\n${"c".repeat(20)}`
    expect(splitMessage(text, 100)[0]).toBe(first)
    expect(splitMessage("x".repeat(50) + "\n" + "y ".repeat(40), 80)[0]).toBe("x".repeat(50))
    expect(splitMessage("short", chunkLimit)).toEqual(["short"])
    // A real reply of 10,000 characters: three chunks or so, each within Slack-friendly size.
    const long = Array.from({ length: 200 }, (_, i) => `Paragraph ${i} says something useful here.`).join("\n\n")
    const chunks = splitMessage(long)
    expect(chunks.length).toBeGreaterThan(1)
    expect(chunks.every((chunk) => chunk.length <= chunkLimit && chunk.startsWith("Paragraph"))).toBe(true)
  })

  it("a code block longer than a chunk is closed at the cut and reopened in the next", () => {
    const code = "```\n" + Array.from({ length: 40 }, (_, i) => `line ${i}`).join("\n") + "\n```"
    const chunks = splitMessage(code, 100)
    expect(chunks.length).toBeGreaterThan(2)
    for (const chunk of chunks) {
      expect(chunk.startsWith("```")).toBe(true)
      expect(chunk.endsWith("```")).toBe(true)
    }
  })

  it("markdown becomes mrkdwn: emphasis, links, headings, bullets; &, <, > escaped everywhere, code kept", () => {
    expect(toMrkdwn("**bold** and *italic* and __also bold__ and ~~gone~~")).toBe("*bold* and _italic_ and *also bold* and ~gone~")
    expect(toMrkdwn("# Title\n- one\n* two")).toBe("*Title*\n• one\n• two")
    expect(toMrkdwn("see [the docs](https://example.com/a?b=1&c=2)")).toBe("see <https://example.com/a?b=1&amp;c=2|the docs>")
    expect(toMrkdwn("a < b && c > d")).toBe("a &lt; b &amp;&amp; c &gt; d")
    expect(toMrkdwn("<@U123> <!channel> <https://evil|click>")).toBe("&lt;@U123&gt; &lt;!channel&gt; &lt;https://evil|click&gt;")
    expect(toMrkdwn("`**not bold** <x>`")).toBe("`**not bold** &lt;x&gt;`")
    expect(toMrkdwn("```ts\nconst a = b < c && **d**\n```")).toBe("```const a = b &lt; c &amp;&amp; **d**\n```")
    expect(toMrkdwn("unclosed ```\ncode <here>")).toBe("unclosed ```code &lt;here&gt;```")
  })

  it("escaping and unescaping are inverse, and escaped text holds no markup characters", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const escaped = escapeSlack(text)
        expect(unescapeSlack(escaped)).toBe(text)
        expect(/[<>]/.test(escaped)).toBe(false)
        expect(/[<>]/.test(toMrkdwn(text.replace(/[[\]()`]/g, "")))).toBe(false)
      })
    )
  })

  it("a thread target round-trips through the turn's channel", () => {
    expect(encodeTarget({ channel: "C1", threadTs: "1700000000.000100" })).toBe("C1:1700000000.000100")
    expect(decodeTarget("C1:1700000000.000100")).toEqual({ channel: "C1", threadTs: "1700000000.000100" })
    expect(decodeTarget("D42")).toEqual({ channel: "D42" })
  })
})
