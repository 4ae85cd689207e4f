import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import * as NodePath from "node:path"
import { Inbox, layerSql } from "../../src/runtime/Inbox.js"
import * as Database from "../../src/storage/Database.js"
import { databases } from "../support/databases.js"
import { makeTempDir } from "../support/tempDir.js"

const message = (text: string) => ({ interface: "web", channel: "web", userId: "operator", text })

describe.each(databases)("Inbox on $dialect", ({ layer }) => {
  it.effect("keeps messages in order with the time they arrived, until each is removed", () =>
    Effect.gen(function*() {
      const inbox = yield* Inbox
      yield* TestClock.adjust(1000)
      const a = yield* inbox.add(message("a"))
      yield* TestClock.adjust(1000)
      const b = yield* inbox.add(message("b"))
      const c = yield* inbox.add({ ...message("c"), interface: "telegram", channel: "42", userId: "7" })
      expect([a.id < b.id, b.id < c.id]).toEqual([true, true])
      expect(a.receivedAtMs).toBe(1000)
      expect(b.receivedAtMs).toBe(2000)
      expect((yield* inbox.pending).map((e) => e.text)).toEqual(["a", "b", "c"])
      expect((yield* inbox.pending)[2]).toMatchObject({ interface: "telegram", channel: "42", userId: "7" })
      yield* inbox.remove(b.id)
      expect((yield* inbox.pending).map((e) => e.text)).toEqual(["a", "c"])
      expect(yield* inbox.size).toBe(2)
    }).pipe(Effect.provide(layerSql.pipe(Layer.provide(layer)))))
})

describe("Inbox", () => {
  it.effect("ids only grow, even after the newest is removed and the database reopened: a turn id is never reused", () =>
    Effect.gen(function*() {
      const file = NodePath.join(makeTempDir(), "kern.db")
      const open = Effect.provide(layerSql.pipe(Layer.provide(Database.layer({ filename: file }))))
      const first = yield* Effect.flatMap(Inbox, (inbox) =>
        Effect.tap(inbox.add(message("a")), (entry) => inbox.remove(entry.id))).pipe(open)
      const next = yield* Effect.flatMap(Inbox, (inbox) =>
        Effect.zip(inbox.add(message("b")), inbox.pending)).pipe(open)
      expect(next[0].id).toBeGreaterThan(first.id)
      expect(next[1].map((e) => e.text)).toEqual(["b"])
    }))
})
