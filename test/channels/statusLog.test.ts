import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeStatusCell } from "../../src/tools/Channels.js"
import { jsonLineLogging } from "../../src/cli/fileLogger.js"
import { readLines } from "../../src/cli/logRecord.js"

describe("a chat channel's connects and drops in the log", () => {
  it.effect("one line per change of state, annotated with the channel; the same state again logs nothing", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      yield* Effect.gen(function*() {
        const status = yield* makeStatusCell("telegram")
        yield* status.set("connected")
        yield* status.set("connected")
        yield* status.set("reconnecting", "Telegram did not answer")
        yield* status.set("reconnecting", "Telegram did not answer again")
        yield* status.set("connected")
        yield* status.set("stopped", "Telegram refused the bot token")
      }).pipe(Effect.provide(jsonLineLogging([], (line) => lines.push(line.trimEnd()))))
      const records = readLines(lines).lines.map((line) => line.record)
      expect(records.map((r) => [r.level, r.message])).toEqual([
        ["INFO", "telegram: connected"],
        ["WARN", "telegram: connection dropped: Telegram did not answer"],
        ["INFO", "telegram: connected again"],
        ["WARN", "telegram: stopped: Telegram refused the bot token"]
      ])
      expect(records[1]?.annotations).toMatchObject({ channel: "telegram", state: "reconnecting", was: "connected" })
    }))
})
