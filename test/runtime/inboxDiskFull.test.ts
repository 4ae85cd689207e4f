import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as InboxSql from "../../src/runtime/Inbox.js"
import * as Database from "../../src/storage/Database.js"
import { makeTempDir } from "../support/tempDir.js"
import { fillDisk, tinyDisk } from "../support/tinyDisk.js"

const message = (i: number) => ({ interface: "telegram", channel: "1", userId: "1", text: `message ${i} ${"x".repeat(2_000)}` })

describe("the inbox with kern.db on a full disk", () => {
  it.scopedLive("a message is refused with a typed disk-full error (the commit fails, not a defect), and taken again once space is back", () =>
    Effect.gen(function*() {
      const disk = NodePath.join(makeTempDir(), "disk")
      yield* tinyDisk(disk, "2m")
      const context = yield* Layer.build(InboxSql.layerSql.pipe(Layer.provideMerge(Database.layer({ filename: NodePath.join(disk, "kern.db") }))))
      const inbox = Context.get(context, InboxSql.Inbox)
      yield* inbox.add(message(0), { key: "telegram:offset", value: "1" })
      const filler = NodePath.join(disk, "filler")
      expect(fillDisk(filler)).toBe("ENOSPC")
      // SQLite keeps the statements in memory; the commit is what fails. A defect would kill the channel's loop.
      for (let i = 1; i <= 5; i++) {
        const refused = yield* inbox.add(message(i), { key: "telegram:offset", value: String(i + 1) }).pipe(Effect.flip)
        expect(refused).toMatchObject({ _tag: "InboxError", reason: "disk-full" })
        expect(refused.message).toMatch(/disk full/)
      }
      NodeFs.rmSync(filler)
      yield* inbox.add(message(6), { key: "telegram:offset", value: "7" })
      expect((yield* inbox.pending).map((entry) => entry.text.split(" ")[1])).toEqual(["0", "6"])
      expect(yield* inbox.cursor("telegram:offset")).toEqual(Option.some("7"))
    }))
})
