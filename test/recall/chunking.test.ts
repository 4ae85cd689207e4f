import { describe, expect, it } from "@effect/vitest"
import { chunkTurns } from "../../src/recall/chunking.js"
import type { IndexedMessage } from "../../src/recall/RecallStore.js"

const bytes = (text: string) => Buffer.byteLength(text, "utf8")
const m = (index: number, role: string, toolCalls = 0): IndexedMessage => ({ index, role, atMs: index * 1000, toolCalls, text: `${role} ${index}` })

describe("chunkTurns", () => {
  it("chunks finished turns; an unfinished last turn waits, and is where the next pass starts", () => {
    const pending = [m(0, "user"), m(1, "assistant"), m(2, "user"), m(3, "assistant", 1), m(4, "tool read")]
    const { chunkedUntil, chunks } = chunkTurns("s", pending, bytes)
    expect(chunks.map((c) => [c.messageStart, c.messageEnd])).toEqual([[0, 1]])
    expect(chunkedUntil).toBe(2)
    const done = chunkTurns("s", [...pending, m(5, "assistant")], bytes)
    expect(done.chunks.map((c) => [c.messageStart, c.messageEnd])).toEqual([[0, 1], [2, 5]])
    expect(done.chunkedUntil).toBe(6)
  })

  it("a page with more after it leaves its last turn to the next page, unless that turn fills the page alone", () => {
    const page = [m(0, "user"), m(1, "assistant"), m(2, "user"), m(3, "assistant")]
    const paged = chunkTurns("s", page, bytes, true)
    expect(paged.chunks.map((c) => [c.messageStart, c.messageEnd])).toEqual([[0, 1]])
    expect(paged.chunkedUntil).toBe(2)
    const oneTurn = [m(10, "user"), m(11, "assistant", 1), m(12, "tool bash"), m(13, "assistant", 1)]
    const cut = chunkTurns("s", oneTurn, bytes, true)
    expect(cut.chunks.map((c) => [c.messageStart, c.messageEnd])).toEqual([[10, 13]])
    expect(cut.chunkedUntil).toBe(14)
  })
})
