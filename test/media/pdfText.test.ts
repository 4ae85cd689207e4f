import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { maxPdfPages, pdfText } from "../../src/media/pdfText.js"
import { makePdf } from "../support/pdfFiles.js"

// A PDF's text is read page by page in a worker thread, capped in characters and pages; what is not a PDF, or a
// bomb, fails or is cut with the runtime's thread free meanwhile.

describe("pdfText", () => {
  it.live("reads each page's text after its page number", () =>
    Effect.gen(function*() {
      const read = yield* pdfText(makePdf(["The invoice total is 42 kroner", undefined, "Signed (twice)"]), { maxChars: 10_000 })
      expect(read.pages).toBe(3)
      expect(read.truncated).toBe(false)
      expect(read.text).toBe("--- page 1 ---\nThe invoice total is 42 kroner\n\n--- page 3 ---\nSigned (twice)\n")
    }))

  it.live("says nothing when no page has a text layer, and fails on what is not a PDF", () =>
    Effect.gen(function*() {
      expect(yield* pdfText(makePdf([undefined, undefined]), { maxChars: 10_000 })).toEqual({ pages: 2, text: "", truncated: false })
      const truncated = makePdf(["hello"]).slice(0, 40)
      const failed = yield* Effect.flip(pdfText(truncated, { maxChars: 10_000 }))
      expect(failed._tag).toBe("PdfUnreadable")
      expect(failed.message.length).toBeGreaterThan(0)
      expect((yield* Effect.flip(pdfText(new TextEncoder().encode("not a pdf at all"), { maxChars: 100 }))).reason).toBe("invalid")
    }))

  it.live("cuts at the character cap", () =>
    Effect.gen(function*() {
      const read = yield* pdfText(makePdf(["a".repeat(80), "b".repeat(80), "c".repeat(80)]), { maxChars: 120 })
      expect(read.text.length).toBe(120)
      expect(read.text).toContain("--- page 1 ---")
      expect(read.text).not.toContain("--- page 3 ---")
      expect(read.truncated).toBe(true)
    }))

  it.live("a page bomb is read up to the page cap, then up to the time limit, while the event loop stays free", () =>
    Effect.gen(function*() {
      // The page cap: 300 pages, 40 read.
      const capped = yield* pdfText(makePdf(["boom"], { repeat: 300 }), { maxChars: 1_000_000, maxPages: 40 })
      expect(capped.pages).toBe(300)
      expect(capped.truncated).toBe(true)
      expect(capped.text).toContain("--- page 40 ---")
      expect(capped.text).not.toContain("--- page 41 ---")

      // The time limit: 20000 pages take PDF.js minutes (it opens in ~4 s on a loaded 2-core machine); what was read by then is kept.
      const bomb = makePdf(["boom"], { repeat: 20_000 })
      let ticks = 0
      let longest = 0
      let last = performance.now()
      const timer = setInterval(() => {
        const now = performance.now()
        longest = Math.max(longest, now - last)
        last = now
        ticks++
      }, 5)
      const read = yield* pdfText(bomb, { maxChars: 1_000_000, maxPages: 20_000, timeout: "12 seconds" }).pipe(
        Effect.ensuring(Effect.sync(() => clearInterval(timer)))
      )
      expect(read.pages).toBe(20_000)
      expect(read.truncated).toBe(true)
      expect(read.text).toContain("--- page 1 ---\nboom")
      expect(read.text).not.toContain("--- page 20000 ---")
      // The timer kept firing while the worker parsed: the runtime's thread was not held.
      expect(ticks).toBeGreaterThan(20)
      console.log(`pdf bomb: ${bomb.length} bytes, longest event-loop gap ${longest.toFixed(0)} ms over ${ticks} ticks`)
    }), 60_000)

  it.live("a PDF that cannot even be opened in time is unreadable", () =>
    Effect.gen(function*() {
      const failed = yield* Effect.flip(pdfText(makePdf(["boom"], { repeat: 20_000 }), { maxChars: 100, timeout: "1 millis" }))
      expect(failed).toMatchObject({ _tag: "PdfUnreadable", reason: "timeout" })
    }))

  it("the default page cap is bounded", () => expect(maxPdfPages).toBeLessThanOrEqual(1000))
})
