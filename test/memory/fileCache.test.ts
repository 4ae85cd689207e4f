import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { makeFileCache } from "../../src/memory/fileCache.js"
import { makeTempDir } from "../support/tempDir.js"

const hourAgo = () => new Date(Date.now() - 3_600_000)

describe("memory file cache", () => {
  it.live("keeps a file's text while its mtime and size stay, reads it again when either changes", () =>
    Effect.gen(function*() {
      const file = NodePath.join(makeTempDir(), "KNOWLEDGE.md")
      const old = hourAgo()
      NodeFs.writeFileSync(file, "first")
      NodeFs.utimesSync(file, old, old)
      const files = yield* makeFileCache
      expect(yield* files.readString(file)).toBe("first")
      // Same size, same mtime: the stat says unchanged, so the kept text is what comes back (no read).
      NodeFs.writeFileSync(file, "other")
      NodeFs.utimesSync(file, old, old)
      expect(yield* files.readString(file)).toBe("first")
      // A new mtime is a change.
      const later = new Date(old.getTime() + 1_000)
      NodeFs.utimesSync(file, later, later)
      expect(yield* files.readString(file)).toBe("other")
      // A new size is a change, even with the mtime put back.
      NodeFs.writeFileSync(file, "longer text")
      NodeFs.utimesSync(file, later, later)
      expect(yield* files.readString(file)).toBe("longer text")
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("a file modified within the last two seconds is always read: a same-size edit in the same tick is seen", () =>
    Effect.gen(function*() {
      const file = NodePath.join(makeTempDir(), "USERS.md")
      NodeFs.writeFileSync(file, "aaaa")
      const files = yield* makeFileCache
      expect(yield* files.readString(file)).toBe("aaaa")
      const stat = NodeFs.statSync(file)
      NodeFs.writeFileSync(file, "bbbb")
      NodeFs.utimesSync(file, stat.atime, stat.mtime)
      expect(yield* files.readString(file)).toBe("bbbb")
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("a missing file fails as the file system says, and is found once it exists", () =>
    Effect.gen(function*() {
      const file = NodePath.join(makeTempDir(), "AGENTS.md")
      const files = yield* makeFileCache
      const missing = yield* Effect.flip(files.readString(file))
      expect(missing._tag).toBe("SystemError")
      NodeFs.writeFileSync(file, "now here")
      expect(yield* files.readString(file)).toBe("now here")
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})
