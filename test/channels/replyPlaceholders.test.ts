import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { layerSql, ReplyPlaceholders } from "../../src/channels/ReplyPlaceholders.js"
import { databases } from "../support/databases.js"

// The placeholders chat channels posted and have not replaced yet: what a restart finishes (leftoverReplies.ts).

describe.each(databases)("reply placeholders, kern.db on $dialect", ({ layer }) => {
  it.effect("are left over until settled, oldest first, per interface; posting a turn's again moves it", () =>
    Effect.gen(function*() {
      const placeholders = yield* ReplyPlaceholders
      yield* TestClock.setTime(1_000)
      yield* placeholders.posted({ interface: "telegram", turnId: "7", channel: "42", messageId: "100" })
      yield* TestClock.setTime(2_000)
      yield* placeholders.posted({ interface: "telegram", turnId: "3", channel: "42", messageId: "101" })
      yield* placeholders.posted({ interface: "slack", turnId: "7", channel: "C1", messageId: "1.5" })
      const left = yield* placeholders.leftovers("telegram")
      expect(left.map((p) => [p.turnId, p.messageId, p.postedAtMs])).toEqual([["7", "100", 1_000], ["3", "101", 2_000]])
      // Posted again (a retry): the new message replaces the old, the time it was first posted stays.
      yield* placeholders.posted({ interface: "telegram", turnId: "7", channel: "43", messageId: "200" })
      expect((yield* placeholders.leftovers("telegram"))[0]).toMatchObject({ channel: "43", messageId: "200", postedAtMs: 1_000 })
      yield* placeholders.settled("telegram", "7")
      expect((yield* placeholders.leftovers("telegram")).map((p) => p.turnId)).toEqual(["3"])
      expect((yield* placeholders.leftovers("slack")).map((p) => p.turnId)).toEqual(["7"])
    }).pipe(Effect.provide(layerSql.pipe(Layer.provide(layer)))))
})
