import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { jsonLineLogging } from "../../src/cli/fileLogger.js"
import { type LogRecord, readLines } from "../../src/cli/logRecord.js"
import { FakeReply, makeWith } from "../support/fakeModelServer.js"
import { operatorTurn, testRuntime } from "../support/operatorTurn.js"
import { summaryModelAgent } from "./summaryAgent.js"

/** A turn on a session over its window: the turn summarizes first; what the log says about it. */
const turnOnLongSession = (failing: boolean) =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* makeWith({ fallback: FakeReply.text("The router keeps DHCP on .100-.200.") })
    if (failing) yield* server.answerModel("summary-model", FakeReply.error(404, { body: JSON.stringify({ error: { message: "no such model" } }) }))
    const dir = summaryModelAgent(server.baseURL)
    const lines: Array<string> = []
    const done = yield* operatorTurn("what changed?").pipe(
      Effect.provide(testRuntime(dir)),
      Effect.provide(jsonLineLogging([], (line) => lines.push(line.trimEnd())))
    )
    const records: ReadonlyArray<LogRecord> = readLines(lines).lines.map((line) => line.record)
    return { done, passes: records.filter((r) => r.message.startsWith("context: summarizer pass")), records }
  })).pipe(Effect.provide(NodeContext.layer))

describe("summarizer passes in the log", () => {
  it.live("a pass says what it segmented and summarized, in its session; a failing summary model's pass is a warning", () =>
    Effect.gen(function*() {
      const ok = yield* turnOnLongSession(false)
      const pass = ok.passes[0]
      expect(pass?.level).toBe("INFO")
      expect(pass?.message).toMatch(/\d+ new segment\(s\), (\d+) of \1 summarized/)
      expect(pass?.annotations).toMatchObject({ session: ok.done.sessionId })
      expect(pass?.annotations["summarized"]).toBeGreaterThan(0)
      expect(ok.records.some((r) => r.level === "DEBUG" && r.message.startsWith("context: summarized segment L0"))).toBe(true)

      const failing = yield* turnOnLongSession(true)
      const warned = failing.passes.find((r) => r.level === "WARN")
      expect(warned?.message).toContain("left for a later pass")
      expect(warned?.annotations).toMatchObject({ session: failing.done.sessionId, summarized: 0 })
    }), 120_000)
})
