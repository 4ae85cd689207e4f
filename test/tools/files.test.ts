import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { edit } from "../../src/tools/edit.js"
import { shouldCompact, utf8Bytes } from "../../src/tools/compaction.js"
import { read, ReadArgs, readTool } from "../../src/tools/read.js"
import { write } from "../../src/tools/write.js"
import { databases } from "../support/databases.js"
import { inSession, makeWorkspace, readText, toolsLayer } from "./support.js"

const run = <A, E, R>(root: string, effect: Effect.Effect<A, E, R>) =>
  effect.pipe(inSession(), Effect.provide(toolsLayer(root, {}, { memoryDb: true })))

describe("read", () => {
  it.effect("shows numbered lines from offset within limit, and where to continue", () =>
    Effect.gen(function*() {
      const root = makeWorkspace({ "a.txt": Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n") + "\n" })
      const out = yield* run(root, read({ path: "a.txt", offset: 3, limit: 2 }))
      assert.strictEqual(out.text.split("\n\n")[0], "3\tline 3\n4\tline 4")
      assert.strictEqual(out.nextOffset, 5)
      assert.strictEqual(out.totalLines, 10)
    }))

  it.effect("a default read names the limit that ended it (bytes before the seed's 2000 lines) and stays whole", () =>
    Effect.gen(function*() {
      const file = Array.from({ length: 3000 }, (_, i) => `export const value${i + 1} = ${i + 1}`).join("\n") + "\n"
      const root = makeWorkspace({ "long.ts": file, "short.txt": "ab\n".repeat(3000) })
      const defaults = yield* Schema.decodeUnknown(ReadArgs)({ path: "long.ts" })
      assert.strictEqual(defaults.limit, 2000)
      const out = yield* run(root, read(defaults))
      assert.strictEqual(out.stoppedBy, "bytes")
      const end = out.endLine!
      assert.isBelow(end, 2000)
      assert.include(out.text, `[lines 1–${end} of 3000, byte limit reached: continue with offset ${end + 1} (maxBytes 12000)]`)
      assert.strictEqual(out.nextOffset, end + 1)
      // Under the compaction threshold: a read is never compacted into head and tail.
      assert.isFalse(shouldCompact(utf8Bytes(out.text), false))
      const lines = yield* run(root, read({ path: "short.txt", offset: 11, limit: 100 }))
      assert.strictEqual(lines.stoppedBy, "lines")
      assert.include(lines.text, "[lines 11–110 of 3000, line limit reached: continue with offset 111 (limit 100)]")
      for (const said of ["default 2000", "default 12000", "whichever comes first"]) assert.include(readTool.description, said)
    }))

  it.effect("lists a directory, folders first", () =>
    Effect.gen(function*() {
      const root = makeWorkspace({ "b.txt": "bb", "sub/c.txt": "c" })
      const out = yield* run(root, read({ path: ".", offset: 1, limit: 100 }))
      assert.strictEqual(out.kind, "directory")
      assert.deepStrictEqual(out.text.split("\n").slice(1), ["sub/", "b.txt (2 B)"])
    }))

  it.effect("describes a binary file instead of dumping it", () =>
    Effect.gen(function*() {
      const root = makeWorkspace()
      NodeFs.writeFileSync(NodePath.join(root, "img.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]))
      const out = yield* run(root, read({ path: "img.png", offset: 1, limit: 10 }))
      assert.strictEqual(out.kind, "binary")
      assert.include(out.text, "PNG image")
    }))

  it.effect("refuses a full read of a file over 256 KB but serves a range of it", () =>
    Effect.gen(function*() {
      const root = makeWorkspace({ "big.log": "x".repeat(100) + "\n".repeat(1) + ("y".repeat(99) + "\n").repeat(3000) })
      const error = yield* run(root, read({ path: "big.log", offset: 1, limit: 10, mode: "full" })).pipe(Effect.flip)
      assert.strictEqual(error.code, "VALIDATION_ERROR")
      assert.include(error.message, "offset and limit")
      const out = yield* run(root, read({ path: "big.log", offset: 2, limit: 3 }))
      assert.strictEqual(out.startLine, 2)
      assert.strictEqual(out.endLine, 4)
    }))

  it.effect("outlines TypeScript and Markdown with line numbers", () =>
    Effect.gen(function*() {
      const root = makeWorkspace({
        "m.ts": "import x from 'y'\nexport function alpha() {}\nexport class Beta {\n  gamma(a: number) {\n  }\n}\nexport const delta = 1\n",
        "d.md": "# Title\ntext\n```\n# not a heading\n```\n## Section\n"
      })
      const ts = yield* run(root, read({ path: "m.ts", offset: 1, limit: 10, mode: "outline" }))
      assert.include(ts.text, "2  function alpha")
      assert.include(ts.text, "3  class Beta")
      assert.include(ts.text, "4    method gamma")
      assert.include(ts.text, "7  export delta")
      const md = yield* run(root, read({ path: "d.md", offset: 1, limit: 10, mode: "outline" }))
      assert.deepStrictEqual(md.text.split("\n").slice(1), ["1  h1 Title", "6    h2 Section"])
    }))

  it.effect("fails NOT_FOUND for a missing file and VALIDATION_ERROR for an offset past the end", () =>
    Effect.gen(function*() {
      const root = makeWorkspace({ "a.txt": "one\n" })
      const missing = yield* run(root, read({ path: "nope.txt", offset: 1, limit: 1 })).pipe(Effect.flip)
      assert.strictEqual(missing.code, "NOT_FOUND")
      const past = yield* run(root, read({ path: "a.txt", offset: 5, limit: 1 })).pipe(Effect.flip)
      assert.strictEqual(past.code, "VALIDATION_ERROR")
    }))
})

// The record of files read (ReadTracker) is in kern.db: write and edit run on both databases it can be on.
describe.each(databases)("on $dialect", ({ layer }) => {
  describe("write and edit", () => {
    const run = <A, E, R>(root: string, effect: Effect.Effect<A, E, R>) =>
      effect.pipe(inSession(), Effect.provide(toolsLayer(root, {}, { database: layer })))

    it.effect("write creates a new file with its parent folders", () =>
      Effect.gen(function*() {
        const root = makeWorkspace()
        const out = yield* run(root, write({ path: "notes/2026/today.md", content: "# Today\n" }))
        assert.isTrue(out.created)
        assert.strictEqual(readText(root, "notes/2026/today.md"), "# Today\n")
      }))

    it.effect("write refuses to overwrite a file that was not read in this session", () =>
      Effect.gen(function*() {
        const root = makeWorkspace({ "a.txt": "old" })
        const error = yield* run(root, write({ path: "a.txt", content: "new" })).pipe(Effect.flip)
        assert.strictEqual(error.code, "VALIDATION_ERROR")
        assert.include(error.message, "read it first")
        assert.strictEqual(readText(root, "a.txt"), "old")
      }))

    it.effect("a read in another session does not count", () =>
      Effect.gen(function*() {
        const root = makeWorkspace({ "a.txt": "old" })
        const program = Effect.gen(function*() {
          yield* read({ path: "a.txt", offset: 1, limit: 10 }).pipe(inSession("other"))
          return yield* write({ path: "a.txt", content: "new" }).pipe(inSession("mine"), Effect.flip)
        })
        const error = yield* program.pipe(Effect.provide(toolsLayer(root, {}, { database: layer })))
        assert.include(error.message, "read it first")
      }))

    it.effect("write overwrites after a read, and refuses when the file changed on disk after the read", () =>
      Effect.gen(function*() {
        const root = makeWorkspace({ "a.txt": "old", "b.txt": "before" })
        const result = yield* run(root, Effect.gen(function*() {
          yield* read({ path: "a.txt", offset: 1, limit: 10 })
          const ok = yield* write({ path: "a.txt", content: "new" })
          yield* read({ path: "b.txt", offset: 1, limit: 10 })
          NodeFs.writeFileSync(NodePath.join(root, "b.txt"), "changed by someone else")
          const stale = yield* write({ path: "b.txt", content: "mine" }).pipe(Effect.flip)
          return { ok, stale }
        }))
        assert.isFalse(result.ok.created)
        assert.strictEqual(readText(root, "a.txt"), "new")
        assert.strictEqual(result.stale.code, "VALIDATION_ERROR")
        assert.include(result.stale.message, "changed on disk")
        assert.strictEqual(readText(root, "b.txt"), "changed by someone else")
      }))

    it.effect("edit replaces exactly one match; a second edit works without a new read", () =>
      Effect.gen(function*() {
        const root = makeWorkspace({ "c.json": "{ \"model\": \"opus-4\" }\n" })
        yield* run(root, Effect.gen(function*() {
          yield* read({ path: "c.json", offset: 1, limit: 10 })
          yield* edit({ path: "c.json", oldString: "opus-4", newString: "opus-4.6", replaceAll: false })
          yield* edit({ path: "c.json", oldString: "model", newString: "chosenModel", replaceAll: false })
        }))
        assert.strictEqual(readText(root, "c.json"), "{ \"chosenModel\": \"opus-4.6\" }\n")
      }))

    it.effect("edit with no match fails NOT_FOUND naming the closest line", () =>
      Effect.gen(function*() {
        const root = makeWorkspace({ "s.ts": "const a = 1\nfunction greet(name: string) {\n  return name\n}\n" })
        const error = yield* run(root, Effect.gen(function*() {
          yield* read({ path: "s.ts", offset: 1, limit: 10 })
          return yield* edit({ path: "s.ts", oldString: "function greet(name) {", newString: "x", replaceAll: false })
            .pipe(Effect.flip)
        }))
        assert.strictEqual(error.code, "NOT_FOUND")
        assert.include(error.message, "closest line is 2")
      }))

    it.effect("edit with several matches fails with the count unless replaceAll", () =>
      Effect.gen(function*() {
        const root = makeWorkspace({ "t.txt": "foo bar foo baz foo\n" })
        const error = yield* run(root, Effect.gen(function*() {
          yield* read({ path: "t.txt", offset: 1, limit: 10 })
          const many = yield* edit({ path: "t.txt", oldString: "foo", newString: "qux", replaceAll: false }).pipe(Effect.flip)
          const all = yield* edit({ path: "t.txt", oldString: "foo", newString: "qux", replaceAll: true })
          assert.strictEqual(all.replacements, 3)
          return many
        }))
        assert.strictEqual(error.code, "VALIDATION_ERROR")
        assert.include(error.message, "occurs 3 times")
        assert.strictEqual(readText(root, "t.txt"), "qux bar qux baz qux\n")
      }))

    it.effect("edit refuses a file never read, and one changed since the read", () =>
      Effect.gen(function*() {
        const root = makeWorkspace({ "u.txt": "alpha\n" })
        const errors = yield* run(root, Effect.gen(function*() {
          const unread = yield* edit({ path: "u.txt", oldString: "alpha", newString: "beta", replaceAll: false }).pipe(Effect.flip)
          yield* read({ path: "u.txt", offset: 1, limit: 10 })
          NodeFs.appendFileSync(NodePath.join(root, "u.txt"), "more\n")
          const stale = yield* edit({ path: "u.txt", oldString: "alpha", newString: "beta", replaceAll: false }).pipe(Effect.flip)
          return [unread, stale]
        }))
        assert.include(errors[0]?.message, "read it first")
        assert.include(errors[1]?.message, "changed on disk")
        assert.strictEqual(readText(root, "u.txt"), "alpha\nmore\n")
      }))

    it.effect("write keeps the permission bits of the file it replaces", () =>
      Effect.gen(function*() {
        const root = makeWorkspace({ "run.sh": "echo hi\n" })
        NodeFs.chmodSync(NodePath.join(root, "run.sh"), 0o755)
        yield* run(root, Effect.zipRight(read({ path: "run.sh", offset: 1, limit: 10 }), write({ path: "run.sh", content: "echo ho\n" })))
        assert.strictEqual(NodeFs.statSync(NodePath.join(root, "run.sh")).mode & 0o777, 0o755)
        assert.deepStrictEqual(NodeFs.readdirSync(root).filter((name) => name.includes("kern-tmp")), [])
      }))
  })
})
