import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { renderMarkdown } from "../../../src/channels/telegram/markdown.js"
import { messageLimit, splitHtml, visibleText } from "../../../src/channels/telegram/split.js"
import { parseTelegramHtml } from "../../support/fakeTelegramHtml.js"

/** Every tag closed, in order: what Telegram needs of each message on its own. */
const balanced = (html: string): boolean => {
  const stack: Array<string> = []
  for (const match of html.matchAll(/<(\/?)([a-z-]+)[^>]*>/g)) {
    if (match[1] === "") stack.push(match[2]!)
    else if (stack.pop() !== match[2]) return false
  }
  return stack.length === 0
}

describe("Telegram formatting", () => {
  it("renders bold, italic, strikethrough, code, fences, links and headings, escaping <, > and &", () => {
    const html = renderMarkdown(
      "# Plan\nUse **bold**, *it*, _it_, ~~gone~~ and `a<b && c`, see [docs](https://x.dev/?a=1&b=2).\n" +
        "```ts\nif (a < b && c > d) {}\n```\nsnake_case_name stays, 2 * 3 * 4 too, <script>alert(1)</script> & more"
    )
    expect(html).toBe(
      "<b>Plan</b>\nUse <b>bold</b>, <i>it</i>, <i>it</i>, <s>gone</s> and <code>a&lt;b &amp;&amp; c</code>, " +
        "see <a href=\"https://x.dev/?a=1&amp;b=2\">docs</a>.\n" +
        "<pre>if (a &lt; b &amp;&amp; c &gt; d) {}</pre>\n" +
        "snake_case_name stays, 2 * 3 * 4 too, &lt;script&gt;alert(1)&lt;/script&gt; &amp; more"
    )
    expect(parseTelegramHtml(html).ok).toBe(true)
  })

  it("leaves unsafe links and unclosed marks as text, and runs an unclosed fence to the end (a reply mid-stream)", () => {
    expect(renderMarkdown("[x](javascript:alert(1)) **open")).toBe("[x](javascript:alert(1)) **open")
    expect(renderMarkdown("Code:\n```\nlet a = 1 <")).toBe("Code:\n<pre>let a = 1 &lt;</pre>")
  })

  it("splits a 9,000-character reply into three messages at paragraph breaks, none over 4096", () => {
    const paragraph = (n: number) => `Paragraph ${n}: ` + "the **quick** brown fox jumps over the lazy dog. ".repeat(31)
    const reply = Array.from({ length: 6 }, (_, n) => paragraph(n)).join("\n\n")
    expect(reply.length).toBeGreaterThan(9000)
    const chunks = splitHtml(renderMarkdown(reply))
    expect(chunks.length).toBe(3)
    for (const chunk of chunks) {
      expect(visibleText(chunk).length).toBeLessThanOrEqual(messageLimit)
      expect(balanced(chunk)).toBe(true)
      expect(parseTelegramHtml(chunk).ok).toBe(true)
    }
    // Each cut falls after a paragraph break.
    for (const chunk of chunks.slice(0, -1)) expect(chunk.endsWith("\n\n")).toBe(true)
    expect(chunks.map(visibleText).join("")).toBe(visibleText(renderMarkdown(reply)))
  })

  it("cuts a code block longer than a message inside it, closing and reopening <pre>", () => {
    const code = "```\n" + Array.from({ length: 900 }, (_, i) => `x${i} = a & b`).join("\n") + "\n```"
    const chunks = splitHtml(renderMarkdown(code))
    expect(chunks.length).toBeGreaterThan(2)
    for (const chunk of chunks) {
      expect(visibleText(chunk).length).toBeLessThanOrEqual(messageLimit)
      expect(chunk.startsWith("<pre>") && chunk.endsWith("</pre>")).toBe(true)
      // Never inside an entity: no chunk ends or starts with a broken &amp;.
      expect(parseTelegramHtml(chunk).ok).toBe(true)
    }
  })

  it("never cuts a surrogate pair", () => {
    const chunks = splitHtml("😀".repeat(3000))
    for (const chunk of chunks) expect(chunk).toMatch(/^(😀)+$/u)
  })

  const markdownPiece = fc.oneof(
    { weight: 6, arbitrary: fc.string({ maxLength: 60 }) },
    { weight: 2, arbitrary: fc.lorem({ maxCount: 40 }) },
    { weight: 1, arbitrary: fc.constantFrom("\n", "\n\n", " ", "**", "*", "_", "`", "~~", "```\n", "&", "<", ">", "[a](https://b.c/?d&e)", "😀", "#  ") },
    { weight: 1, arbitrary: fc.string({ minLength: 200, maxLength: 900 }).map((s) => `**${s}**`) },
    { weight: 1, arbitrary: fc.stringMatching(/^[a-z<>& ]{500,1500}$/).map((s) => "```\n" + s + "\n```") }
  )

  it("property: no chunk over the limit (as Telegram counts), each balanced and parseable, the text unchanged when joined", () => {
    fc.assert(
      fc.property(fc.array(markdownPiece, { maxLength: 40 }), fc.integer({ min: 40, max: messageLimit }), (pieces, limit) => {
        const html = renderMarkdown(pieces.join(""))
        const chunks = splitHtml(html, limit)
        for (const chunk of chunks) {
          expect(visibleText(chunk).length).toBeLessThanOrEqual(limit)
          expect(balanced(chunk)).toBe(true)
          expect(parseTelegramHtml(chunk).ok).toBe(true)
        }
        expect(chunks.map(visibleText).join("")).toBe(visibleText(html))
      }),
      { numRuns: 300 }
    )
  })
})
