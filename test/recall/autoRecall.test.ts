import { Prompt } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { toPromptMessages } from "../../src/context/prompt.js"
import { selectAutoRecall, withRecallBlock } from "../../src/recall/autoRecall.js"
import * as Embedder from "../../src/recall/Embedder.js"
import { Recall } from "../../src/recall/Recall.js"
import { RecallHit } from "../../src/recall/schema.js"
import { AssistantMessage, UserMessage } from "../../src/session/messages.js"
import { answer, appendLines, header, loadedAt, makeAgentDir, recallLayer, sessionPath, user } from "./harness.js"

/** Counts a token per character: the cap's arithmetic is visible in the test. */
const perChar = (text: string) => text.length

const hit = (n: number, distance: number | null, text = `hit ${n}`) =>
  new RecallHit({
    source: "session",
    sessionId: `s${n}`,
    path: null,
    messageStart: 0,
    messageEnd: 1,
    startedAt: "2026-01-01T00:00:00.000Z",
    endedAt: "2026-01-01T00:00:00.000Z",
    distance,
    score: 1 / (60 + n),
    text
  })

const on = { enabled: true, trimmed: true, maxDistance: 0.95, maxTokens: 2_000 }

describe("auto-recall selection", () => {
  it("only when enabled and messages were trimmed, and only for a real query", () => {
    const hits = [hit(1, 0.2)]
    expect(selectAutoRecall({ ...on, trimmed: false }, "q", hits, [], perChar)).toBeUndefined()
    expect(selectAutoRecall({ ...on, enabled: false }, "q", hits, [], perChar)).toBeUndefined()
    expect(selectAutoRecall(on, "  ", hits, [], perChar)).toBeUndefined()
    expect(selectAutoRecall(on, "q", hits, [], perChar)?.hits).toEqual(hits)
  })

  it("keeps the top 3 within the distance cut; keyword-only hits (no distance) are not taken", () => {
    const hits = [hit(1, 0.1), hit(2, 0.96), hit(3, null), hit(4, 0.95), hit(5, 0.3), hit(6, 0.4)]
    const chosen = selectAutoRecall(on, "q", hits, [], perChar)!
    expect(chosen.hits.map((h) => h.sessionId)).toEqual(["s1", "s4", "s5"])
  })

  it("skips hits already in the context", () => {
    const chosen = selectAutoRecall(on, "q", [hit(1, 0.1), hit(2, 0.2)], [{ sessionId: "s1", messageStart: 1, messageEnd: 9 }], perChar)!
    expect(chosen.hits.map((h) => h.sessionId)).toEqual(["s2"])
  })

  it("within the token cap keeps the best hits that fit, not all or nothing", () => {
    const long = hit(1, 0.1, "x".repeat(3_000))
    const fits = hit(2, 0.2, "the short one")
    const also = hit(3, 0.3, "y".repeat(1_700))
    const chosen = selectAutoRecall(on, "q", [long, fits, also], [], perChar)!
    // The best one alone is over 2,000 and is skipped; the next two fit together.
    expect(chosen.hits.map((h) => h.sessionId)).toEqual(["s2", "s3"])
    expect(chosen.tokens).toBeLessThanOrEqual(2_000)
    expect(chosen.tokens).toBeGreaterThan("the short one".length + 1_700)
    const tight = selectAutoRecall({ ...on, maxTokens: 1_000 }, "q", [long, fits, also], [], perChar)!
    expect(tight.hits.map((h) => h.sessionId)).toEqual(["s2"])
    expect(selectAutoRecall({ ...on, maxTokens: 50 }, "q", [long], [], perChar)).toBeUndefined()
  })
})

describe("auto-recall placement", () => {
  const history = [
    new UserMessage({ text: "first", at: "2026-01-01T00:00:00.000Z" }),
    new AssistantMessage({ text: "one", at: "2026-01-01T00:00:01.000Z" }),
    new UserMessage({ text: "newest question", at: "2026-01-01T00:00:02.000Z" })
  ]

  it("goes into the newest user message, before its text; everything before it is unchanged and nothing is mutated", () => {
    const messages = toPromptMessages("system prompt", history)
    const snapshot = JSON.stringify(messages)
    const placed = withRecallBlock(messages, "<recall>x</recall>")
    expect(JSON.stringify(messages)).toBe(snapshot)
    expect(placed).toHaveLength(messages.length)
    // The cached prefix (system prompt and earlier turns) is the very same values.
    for (let i = 0; i < messages.length - 1; i++) expect(placed[i]).toBe(messages[i])
    const last = placed[placed.length - 1] as Prompt.UserMessage
    expect(last.role).toBe("user")
    expect(last.content.map((part) => (part.type === "text" ? part.text : part.type))).toEqual(["<recall>x</recall>", "newest question"])
    // It decodes as a prompt message like any other.
    expect(Prompt.fromMessages(placed).content).toHaveLength(messages.length)
  })
})

describe("auto-recall through the recall service", () => {
  it.live("finds a past conversation near the user's words; nothing when the turn was not trimmed", () =>
    Effect.gen(function*() {
      const dir = makeAgentDir()
      const past = "20260101-100000-000-aaaa"
      appendLines(sessionPath(dir, past), header(past), user("the boiler pressure should sit at 1.5 bar"), answer("noted, 1.5 bar"))
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        yield* recall.sync
        const current = [{ sessionId: "now", messageStart: 0, messageEnd: 5 }]
        const found = yield* recall.autoRecall(on, "what boiler pressure again?", current)
        expect(found?.hits.map((h) => h.sessionId)).toEqual([past])
        expect(found?.block).toContain("1.5 bar")
        expect(found!.tokens).toBeGreaterThan(0)
        expect(yield* recall.autoRecall({ ...on, trimmed: false }, "what boiler pressure again?", current)).toBeUndefined()
        // A far-off question is cut by distance even though search returns its best.
        expect(yield* recall.autoRecall({ ...on, maxDistance: 0.1 }, "plant tomatoes in may", current)).toBeUndefined()
      }).pipe(Effect.provide(recallLayer(loadedAt(dir), Embedder.layerTest({ dimensions: 64 }))))
    }))

  it.live("a hit within the distance is taken even when keyword matches farther away outrank it in the fusion", () =>
    Effect.gen(function*() {
      const dir = makeAgentDir()
      const past = "20260101-100000-000-aaaa"
      appendLines(
        sessionPath(dir, past),
        header(past),
        user("an automobile museum opened downtown with pasta stalls, garlic bread, opera singers and a lottery"),
        answer("sounds lively"),
        user("my grandfather's automobile collection smelled of varnish, leather, pipe smoke and old newspapers"),
        answer("how nostalgic"),
        user("automobile insurance paperwork, tax forms, receipts, invoices and a dentist appointment letter"),
        answer("filed them"),
        user("my car needs new tyres"),
        answer("noted: tyres for the car")
      )
      const synonyms = { automobile: "car", tires: "tyres" }
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        yield* recall.sync
        // Three chunks share the word "automobile" (keyword and vector lists both rank them) but are far in meaning;
        // the one near in meaning shares no word and comes fourth in the fusion.
        const fused = yield* recall.search({ query: "automobile tires", limit: 10 })
        expect(fused.hits.map((h) => h.messageStart)).toEqual([4, 2, 0, 6])
        const found = yield* recall.autoRecall({ ...on, maxDistance: 0.5 }, "automobile tires", [])
        expect(found?.hits.map((h) => h.messageStart)).toEqual([6])
      }).pipe(Effect.provide(recallLayer(loadedAt(dir), Embedder.layerTest({ dimensions: 256, synonyms }))))
    }))
})
