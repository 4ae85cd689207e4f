import { describe, expect, it } from "@effect/vitest"
import { previewChars, searchText, toolWholeHit } from "../../src/recall/format.js"
import { RecallHit, SearchResult } from "../../src/recall/schema.js"

const hit = (fields: Partial<ConstructorParameters<typeof RecallHit>[0]>) =>
  new RecallHit({
    source: "session",
    sessionId: "20260101-100000-000-aaaa",
    path: null,
    messageStart: 4,
    messageEnd: 9,
    startedAt: "2026-01-10T09:00:00.000Z",
    endedAt: "2026-01-10T09:05:00.000Z",
    distance: null,
    score: 1,
    text: "x".repeat(previewChars + 1),
    ...fields
  })

describe("recall listings", () => {
  it("tell the model the exact call of a tool it has that gives a cut hit whole: recall load, or read for a file", () => {
    const text = searchText(
      new SearchResult({ query: "q", mode: "hybrid", hits: [hit({}), hit({ source: "file", sessionId: null, path: "knowledge/boat.md" })] }),
      toolWholeHit
    )
    expect(text).toContain(
      `[1 more character: recall { "mode": "load", "sessionId": "20260101-100000-000-aaaa", "messageStart": 4, "messageEnd": 9 } reads the messages whole]`
    )
    expect(text).toContain(`[1 more character: read { "path": "knowledge/boat.md" } reads the file]`)
  })

  it("a hit that fits is shown whole, with no hint", () => {
    const text = searchText(new SearchResult({ query: "q", mode: "hybrid", hits: [hit({ text: "short" })] }), toolWholeHit)
    expect(text).not.toContain("more character")
  })
})
