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
      expect(yield* files.readString(file, NodePath.dirname(file))).toBe("first")
      // Same size, same mtime: the stat says unchanged, so the kept text is what comes back (no read).
      NodeFs.writeFileSync(file, "other")
      NodeFs.utimesSync(file, old, old)
      expect(yield* files.readString(file, NodePath.dirname(file))).toBe("first")
      // A new mtime is a change.
      const later = new Date(old.getTime() + 1_000)
      NodeFs.utimesSync(file, later, later)
      expect(yield* files.readString(file, NodePath.dirname(file))).toBe("other")
      // A new size is a change, even with the mtime put back.
      NodeFs.writeFileSync(file, "longer text")
      NodeFs.utimesSync(file, later, later)
      expect(yield* files.readString(file, NodePath.dirname(file))).toBe("longer text")
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("a file with whole-second times modified within two seconds is read again: a same-size edit in the same tick is seen", () =>
    Effect.gen(function*() {
      const file = NodePath.join(makeTempDir(), "USERS.md")
      NodeFs.writeFileSync(file, "aaaa")
      // A whole second, as ext3, HFS+ or FAT keep it: the edit below may share its tick.
      const tick = new Date(Math.floor(Date.now() / 1_000) * 1_000)
      NodeFs.utimesSync(file, tick, tick)
      const files = yield* makeFileCache
      expect(yield* files.readString(file, NodePath.dirname(file))).toBe("aaaa")
      NodeFs.writeFileSync(file, "bbbb")
      NodeFs.utimesSync(file, tick, tick)
      expect(yield* files.readString(file, NodePath.dirname(file))).toBe("bbbb")
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("text read inside the window stays suspect after the window: a same-tick edit is still seen", () =>
    Effect.gen(function*() {
      const file = NodePath.join(makeTempDir(), "USERS.md")
      NodeFs.writeFileSync(file, "aaaa")
      const tick = new Date(Math.floor(Date.now() / 1_000) * 1_000 - 1_000)
      NodeFs.utimesSync(file, tick, tick)
      const files = yield* makeFileCache
      expect(yield* files.readString(file, NodePath.dirname(file))).toBe("aaaa")
      NodeFs.writeFileSync(file, "bbbb")
      NodeFs.utimesSync(file, tick, tick)
      // The file is now older than the window, but "aaaa" was read inside it.
      yield* Effect.sleep(Math.max(0, tick.getTime() + 2_050 - Date.now()))
      expect(yield* files.readString(file, NodePath.dirname(file))).toBe("bbbb")
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("a file with sub-second times is kept once its text was read 100 ms after its mtime", () =>
    Effect.gen(function*() {
      const file = NodePath.join(makeTempDir(), "KERN.md")
      NodeFs.writeFileSync(file, "aaaa")
      // Finer than a second, as ext4, xfs or APFS keep it; a later edit would get a later mtime.
      const fine = new Date(Math.floor(Date.now() / 1_000) * 1_000 - 1_000 + 123)
      NodeFs.utimesSync(file, fine, fine)
      const files = yield* makeFileCache
      expect(yield* files.readString(file, NodePath.dirname(file))).toBe("aaaa")
      // Same size, same mtime: unchanged, so no read (only a same-tick edit could do this, and the tick is past).
      NodeFs.writeFileSync(file, "bbbb")
      NodeFs.utimesSync(file, fine, fine)
      expect(yield* files.readString(file, NodePath.dirname(file))).toBe("aaaa")
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("a missing file fails as missing, and is found once it exists", () =>
    Effect.gen(function*() {
      const file = NodePath.join(makeTempDir(), "AGENTS.md")
      const files = yield* makeFileCache
      const missing = yield* Effect.flip(files.readString(file, NodePath.dirname(file)))
      expect(missing.reason).toBe("missing")
      NodeFs.writeFileSync(file, "now here")
      expect(yield* files.readString(file, NodePath.dirname(file))).toBe("now here")
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})
