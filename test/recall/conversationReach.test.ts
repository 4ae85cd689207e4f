import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { Audience } from "../../src/kernel/Audience.js"
import * as Embedder from "../../src/recall/Embedder.js"
import { Recall, type RunAudience } from "../../src/recall/Recall.js"
import type { SearchResult } from "../../src/recall/schema.js"
import { sessionIdIn } from "../../src/session/conversationIds.js"
import { writeFiles } from "../support/tempDir.js"
import { answer, appendLines, header, loadedAt, makeAgentDir, sessionPath, user, withRecall } from "./harness.js"

const operatorSession = sessionIdIn("20261120-100000-000-aaaa", "main")
const friendSession = sessionIdIn("20261121-100000-000-bbbb", "telegram-555")
const otherSession = sessionIdIn("20261122-100000-000-cccc", "telegram-777")

const friend: Audience = { conversationId: "telegram-555", interface: "telegram", channel: "555", userId: "555", memory: "shared" }
const asFriend: RunAudience = { audience: friend }
/** The operator, in their own conversation wherever they speak, or outside any (the CLI, the HTTP API). */
const operators: ReadonlyArray<RunAudience> = [
  {},
  { audience: { conversationId: "main", interface: "telegram", channel: "42", userId: "42", memory: "all" } }
]

/** What only the operator (and another paired user) said or wrote: none of it may reach the friend. */
const foreign = ["4711", "operator-marker", "other-user-marker", "knowledge-marker", "note-marker"]

/**
 * The operator's session floods the index with turns far better matched to "bank PIN" than the friend's own one
 * (more than a search's candidates for one hit), another user's conversation and knowledge/ and notes/ files say it too.
 */
const seed = (dir: string) => {
  const flood = Array.from({ length: 30 }, (_, i) => [
    user(`bank PIN bank PIN: my bank PIN is 4711, bank PIN 4711 (operator-marker ${i})`, `2026-11-20T10:${String(i).padStart(2, "0")}:00.000Z`),
    answer(`noted the bank PIN 4711 again (${i})`, `2026-11-20T10:${String(i).padStart(2, "0")}:01.000Z`)
  ]).flat()
  appendLines(sessionPath(dir, operatorSession), header(operatorSession), ...flood)
  appendLines(
    sessionPath(dir, friendSession),
    header(friendSession),
    user("hello, I am Bob, a friend of ada", "2026-11-21T10:00:00.000Z"),
    answer("hello Bob", "2026-11-21T10:00:01.000Z"),
    user("I forgot the PIN of my own bank card; how do I reset a card PIN with my bank?", "2026-11-21T10:01:00.000Z"),
    answer("call your bank; they send a new card PIN by post (friend-own)", "2026-11-21T10:01:01.000Z")
  )
  appendLines(
    sessionPath(dir, otherSession),
    header(otherSession),
    user("my bank PIN is 9999 (other-user-marker)", "2026-11-22T10:00:00.000Z"),
    answer("noted your bank PIN", "2026-11-22T10:00:01.000Z")
  )
  writeFiles(dir, {
    "knowledge/bank.md": "# bank\nthe bank PIN is 4711 (knowledge-marker)\n",
    "notes/2026-11-26.md": "ada: bank PIN 4711 (note-marker)\n"
  })
}

/** Recall over a freshly seeded agent folder, its index synced. */
const seeded = <A, E>(embedder: Layer.Layer<Embedder.Embedder>, body: (recall: Recall) => Effect.Effect<A, E>) =>
  Effect.suspend(() => {
    const dir = makeAgentDir()
    seed(dir)
    return withRecall(loadedAt(dir), embedder, (recall) => Effect.zipRight(recall.sync, body(recall)))
  })

const shown = (result: SearchResult) => result.hits.map((hit) => hit.text).join("\n")

const embedders: ReadonlyArray<readonly [string, Layer.Layer<Embedder.Embedder>]> = [
  ["keywords only", Embedder.layerNone("embeddingModel is false")],
  ["vectors and keywords", Embedder.layerTest({ dimensions: 64 })]
]

const on = { enabled: true, trimmed: true, maxDistance: 0.95, maxTokens: 4_000 }

describe("recall in a conversation that is not the operator's", () => {
  for (const [mode, embedder] of embedders) {
    it.live(`search and auto-recall find only the conversation's own sessions, its best hit however many better ones lie elsewhere (${mode})`, () =>
      seeded(embedder, (recall) =>
        Effect.gen(function*() {
          for (const limit of [1, 5, 50]) {
            const found = yield* recall.search({ query: "what is the bank PIN?", limit }, asFriend)
            expect(found.hits.length, `limit ${limit}`).toBeGreaterThan(0)
            expect(found.hits.every((hit) => hit.source === "session" && hit.sessionId === friendSession)).toBe(true)
            for (const marker of foreign) expect(shown(found), `limit ${limit}: ${marker}`).not.toContain(marker)
          }
          // The one hit of a one-hit search is the friend's own turn about a PIN.
          expect(shown(yield* recall.search({ query: "what is the bank PIN?", limit: 1 }, asFriend))).toContain("friend-own")
          // Every word the operator used, and none of the friend's: by keywords nothing, by meaning only its own.
          const theirs = yield* recall.search({ query: "4711 operator-marker knowledge-marker note-marker", limit: 50 }, asFriend)
          expect(theirs.hits.every((hit) => hit.sessionId === friendSession)).toBe(true)
          if (mode === "keywords only") expect(theirs.hits).toEqual([])
          // Dated searches are filtered the same way.
          expect(shown(yield* recall.search({ query: "bank PIN", after: "2026-11-19", before: "2026-11-23", limit: 50 }, asFriend))).not.toContain("4711")

          const recalled = yield* recall.autoRecall(on, "what is the bank PIN?", [], asFriend)
          for (const marker of foreign) expect(recalled?.block ?? "", marker).not.toContain(marker)
          if (mode === "vectors and keywords") expect(recalled?.block).toContain("friend-own")

          // The operator searches everything, as before: their sessions, the other user's, the friend's and the files.
          for (const run of operators) {
            const all = yield* recall.search({ query: "bank PIN", limit: 50 }, run)
            for (const marker of ["operator-marker", "other-user-marker", "knowledge-marker", "note-marker", "friend-own"]) {
              expect(shown(all), marker).toContain(marker)
            }
            if (mode === "vectors and keywords") expect((yield* recall.autoRecall(on, "what is the bank PIN?", [], run))?.block).toContain("4711")
          }
        })))
  }

  it.live("load reads the conversation's own sessions only: any other is not there to it", () =>
    seeded(Embedder.layerNone("embeddingModel is false"), (recall) =>
      Effect.gen(function*() {
        for (const sessionId of [operatorSession, otherSession]) {
          const refused = yield* Effect.flip(recall.load({ sessionId, messageStart: 0, messageEnd: 100 }, asFriend))
          expect(refused).toMatchObject({ _tag: "RecallError", reason: "not_found" })
          expect(refused.message).toBe(`no indexed messages 0–100 in session "${sessionId}"`)
        }
        const own = yield* recall.load({ sessionId: friendSession, messageStart: 0, messageEnd: 100 }, asFriend)
        expect(own.messages.map((m) => m.text).join("\n")).toContain("friend-own")
        for (const run of operators) {
          for (const sessionId of [operatorSession, otherSession, friendSession]) {
            expect((yield* recall.load({ sessionId, messageStart: 0, messageEnd: 1 }, run)).messages).toHaveLength(2)
          }
        }
      })))
})
