import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { ContextWindow } from "../../src/context/ContextWindow.js"
import { SegmentStore } from "../../src/context/SegmentStore.js"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import { UserMessage } from "../../src/session/messages.js"
import { summaryModelAgent } from "./summaryAgent.js"

// A one-shot `kern chat` runs no catch-up of the summaries: on a session whose summaries are far behind (a long session
// kern never summarized) it holds and stores only the raw window, and the next one reads only that from the file. The
// request must be the one a process holding the whole session sends, turn after turn; a process that does catch up
// (the running agent) still reads the whole session.

const sessionId = "20261122-100000-000-beef"
const at = "2026-11-28T10:00:00.000Z"

/** An agent with a 2,000-token window and a session of 1,000 messages, none summarized: far behind from the start. */
const agentDir = () => summaryModelAgent("http://127.0.0.1:9/v1", {}, { maxContextTokens: 2_000 }, sessionId, 1_000)

/**
 * One process on `dir`: opens the session (as a one-shot chat, or as a process that catches up), appends `text` as the
 * turn does, and prepares the request; then the work after a turn.
 */
const turnIn = (dir: string, text: string, oneShot: boolean) =>
  Effect.gen(function*() {
    const context = yield* ContextWindow
    const { session } = yield* openActiveSession({ oneShot })
    const first = yield* session.history.first
    const before = yield* session.writer.stats
    const message = new UserMessage({ text, at })
    yield* session.writer.append(message)
    yield* session.history.append(message, { byteOffset: before.bytes, linesBefore: before.messages })
    const prepared = yield* context.prepare({
      sessionId,
      history: session.history,
      system: "You are a test agent.",
      toolsTokens: 300,
      modelId: "test-model",
      progress: () => Effect.void
    })
    yield* context.afterTurn(sessionId, session.history)
    yield* context.settled()
    const cut = yield* (yield* SegmentStore).getCut(sessionId)
    return { prepared, first, cut }
  }).pipe(
    Effect.scoped,
    Effect.provide(agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 }).pipe(
      Layer.provide(Layer.succeed(ProcessEnv, { OPENAI_API_KEY: "sk-test" })),
      Layer.provide(NodeContext.layer)
    ))
  )

describe("a one-shot chat on a session whose summaries are far behind", () => {
  it.live("reads only the raw window after its first turn, and sends the request a whole read sends, turn after turn", () =>
    Effect.gen(function*() {
      const raw = agentDir()
      const whole = agentDir()
      const texts = ["what did we decide about DNS?", "and the DHCP range?", "and the pi?"]
      for (const [turn, text] of texts.entries()) {
        const fast = yield* turnIn(raw, text, true)
        const slow = yield* turnIn(whole, text, false)
        expect(fast.prepared).toEqual(slow.prepared)
        expect(fast.prepared.breakdown.fallback).toBe(true)
        // The whole session read every time; the raw window only, from the second turn on.
        expect(slow.first).toBe(0)
        if (turn === 0) expect(fast.first).toBe(0)
        else expect(fast.first).toBeGreaterThan(900)
        // Stored: the raw window itself (no summary needs what is before it), against the summaries' start.
        const stored = Option.getOrThrow(fast.cut)
        expect(stored.messageIndex).toBe(fast.prepared.breakdown.cut)
        expect(stored.byteOffset).toBeGreaterThan(0)
        expect(stored.rawStart ?? undefined).toBeUndefined()
        expect(Option.getOrThrow(slow.cut).messageIndex).toBe(0)
      }
      // A process that catches up reads the whole session, and stores the cut as it always did.
      const after = yield* turnIn(raw, "one more", false)
      expect(after.first).toBe(0)
      expect(Option.getOrThrow(after.cut).messageIndex).toBe(0)
      expect(Option.getOrThrow(after.cut).rawStart).toBe(after.prepared.breakdown.cut)
      expect(after.prepared).toEqual((yield* turnIn(whole, "one more", false)).prepared)
    }))

  it.live("reads the whole session when the summaries are not far behind the stored raw window (a larger window now)", () =>
    Effect.gen(function*() {
      const dir = agentDir()
      yield* turnIn(dir, "what did we decide about DNS?", true)
      const next = yield* turnIn(dir, "and the DHCP range?", true)
      expect(next.first).toBeGreaterThan(900)
      // 1,000 messages take at least 4,000 tokens: with a window of 10,000 the backlog may fit, so it is counted.
      const config = `${dir}/.kern/config.json`
      const NodeFs = yield* Effect.promise(() => import("node:fs"))
      NodeFs.writeFileSync(config, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(config, "utf8")), maxContextTokens: 10_000 }))
      const wider = yield* turnIn(dir, "and the pi?", true)
      expect(wider.first).toBe(0)
    }))
})
