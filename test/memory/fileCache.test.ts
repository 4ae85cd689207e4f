import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { makeFileCache } from "../../src/memory/fileCache.js"
import { isRefusal } from "../../src/storage/agentFiles.js"
import { type Attack, fileAttacks, leaked, makeOutside, plantSecrets, releaseFifos } from "../support/linkCorpus.js"
import { makeTempDir } from "../support/tempDir.js"

const hourAgo = () => new Date(Date.now() - 3_600_000)

/**
 * An agent folder whose AGENTS.md the cache has read and kept, then swapped for `attack` with the size and mtime the
 * kept text had; undefined when the attack cannot be planted here.
 */
const keptThenSwapped = (attack: Attack, outside: string) =>
  Effect.gen(function*() {
    const dir = NodePath.join(makeTempDir(), "agent")
    NodeFs.mkdirSync(dir)
    plantSecrets(dir)
    // What the attack's path will stat as (links followed): the kept file is made to look the same.
    const probe = NodePath.join(dir, "probe.md")
    if (!attack.plant(dir, outside, probe)) return undefined
    const looks = NodeFs.statSync(probe)
    NodeFs.rmSync(probe)
    const file = NodePath.join(dir, "AGENTS.md")
    const size = looks.isFile() && looks.size <= 64 * 1024 ? looks.size : 5
    NodeFs.writeFileSync(file, "legit".padEnd(size, "."))
    const old = hourAgo()
    NodeFs.utimesSync(file, old, old)
    const files = yield* makeFileCache
    expect(yield* files.readString(file, dir)).toBe("legit".padEnd(size, "."))
    NodeFs.rmSync(file)
    attack.plant(dir, outside, file)
    // Through the link (or on the hard link's file): the mtime the kept text had.
    if (NodeFs.statSync(file).isFile()) NodeFs.utimesSync(file, old, old)
    return { dir, file, files } as const
  })

/**
 * For every attack of the corpus that can be planted: a kept file swapped for it (keptThenSwapped), asked of the
 * cache by `ask`, its FIFOs released, then the answer judged.
 */
const eachKeptThenSwapped = <A, E, R>(
  ask: (swapped: { readonly dir: string; readonly file: string; readonly files: Effect.Effect.Success<typeof makeFileCache> }) => Effect.Effect<A, E, R>,
  judge: (attack: Attack, answer: A) => void
) =>
  Effect.gen(function*() {
    const outside = makeOutside()
    for (const attack of fileAttacks) {
      const swapped = yield* keptThenSwapped(attack, outside)
      if (swapped === undefined) continue
      const answer = yield* ask(swapped)
      releaseFifos(swapped.dir)
      judge(attack, answer)
    }
  })

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

  it.live("a kept file swapped for any attack of the corpus, with the size and mtime it had, goes back through the door and is refused", () =>
    Effect.gen(function*() {
      yield* eachKeptThenSwapped(
        ({ dir, file, files }) => Effect.either(files.readString(file, dir)),
        (attack, result) => {
          if (result._tag === "Right") expect.fail(`${attack.name}: kept text or a read came back: ${leaked(result.right).join(", ") || result.right}`)
          expect(isRefusal(result.left), `${attack.name}: ${result.left.message}`).toBe(true)
        }
      )
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("unchangedTexts answers the kept text only while readString would: never read, changed, missing or racy is undefined", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const [kept, edited, never, gone, racy] = ["AGENTS.md", "IDENTITY.md", "KERN.md", "USERS.md", "KNOWLEDGE.md"].map((name) =>
        NodePath.join(dir, name)
      ) as [string, string, string, string, string]
      const old = hourAgo()
      for (const file of [kept, edited, never, gone]) {
        NodeFs.writeFileSync(file, `text of ${NodePath.basename(file)}`)
        NodeFs.utimesSync(file, old, old)
      }
      // Written now with a whole-second mtime: read inside its window, so never trusted without a read.
      NodeFs.writeFileSync(racy, "racy")
      const tick = new Date(Math.floor(Date.now() / 1_000) * 1_000)
      NodeFs.utimesSync(racy, tick, tick)
      const files = yield* makeFileCache
      for (const file of [kept, edited, gone, racy]) yield* files.readString(file, dir)
      expect(yield* files.unchangedTexts([kept, edited, never, gone, racy], dir)).toEqual([
        "text of AGENTS.md",
        "text of IDENTITY.md",
        undefined,
        "text of USERS.md",
        undefined
      ])
      // An edit between two steps (a new size; a new mtime) and a removal: the next step reads them again.
      NodeFs.writeFileSync(edited, "edited between steps")
      NodeFs.utimesSync(edited, old, old)
      NodeFs.utimesSync(kept, new Date(old.getTime() + 1_000), new Date(old.getTime() + 1_000))
      NodeFs.rmSync(gone)
      expect(yield* files.unchangedTexts([kept, edited, never, gone, racy], dir)).toEqual([undefined, undefined, undefined, undefined, undefined])
      expect(yield* files.readString(edited, dir)).toBe("edited between steps")
      expect(yield* files.unchangedTexts([edited], dir)).toEqual(["edited between steps"])
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("unchangedTexts never answers kept text for a kept file swapped for any attack of the corpus with the size and mtime it had", () =>
    Effect.gen(function*() {
      yield* eachKeptThenSwapped(
        ({ dir, file, files }) => Effect.map(files.unchangedTexts([file], dir), ([answer]) => answer),
        (attack, answer) => expect(answer, `${attack.name}: kept text came back for the swapped file`).toBeUndefined()
      )
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("the notes listing is kept while notes/ is unchanged, and made again when a note is added or removed", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      const notes = NodePath.join(dir, "notes")
      NodeFs.mkdirSync(notes)
      NodeFs.writeFileSync(NodePath.join(notes, "2026-01-01.md"), "one")
      const old = hourAgo()
      NodeFs.utimesSync(notes, old, old)
      const files = yield* makeFileCache
      expect(yield* files.notes(dir)).toEqual(["2026-01-01.md"])
      // The folder's mtime put back: unchanged as far as a stat can tell, so the kept listing comes back.
      NodeFs.writeFileSync(NodePath.join(notes, "2026-01-02.md"), "two")
      NodeFs.utimesSync(notes, old, old)
      expect(yield* files.notes(dir)).toEqual(["2026-01-01.md"])
      // A note added (the folder's mtime moves): listed again.
      NodeFs.writeFileSync(NodePath.join(notes, "2026-01-03.md"), "three")
      expect(yield* files.notes(dir)).toEqual(["2026-01-01.md", "2026-01-02.md", "2026-01-03.md"])
      NodeFs.rmSync(NodePath.join(notes, "2026-01-01.md"))
      expect(yield* files.notes(dir)).toEqual(["2026-01-02.md", "2026-01-03.md"])
      // notes/ swapped for another folder with the same mtime: another inode, listed again.
      NodeFs.renameSync(notes, NodePath.join(dir, "old-notes"))
      NodeFs.mkdirSync(notes)
      NodeFs.writeFileSync(NodePath.join(notes, "2026-02-01.md"), "new")
      NodeFs.utimesSync(notes, old, old)
      expect(yield* files.notes(dir)).toEqual(["2026-02-01.md"])
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})
