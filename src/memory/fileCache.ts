import type { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Clock, Effect, Ref } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import {
  type AgentFile,
  type AgentFileError,
  makeSkippedFiles,
  readAgentFile,
  readAgentText,
  reportEverySkip,
  type SkippedFiles,
  unchangedAgentFile
} from "../storage/agentFiles.js"
import { listNotes } from "./notes.js"

interface Entry {
  readonly file: AgentFile
  readonly text: string
  /** When the file was stat'ed for this text. */
  readonly readAtMs: number
}

interface Listing {
  readonly dev: number
  readonly ino: number
  readonly mtimeMs: number
  readonly names: ReadonlyArray<string>
  readonly readAtMs: number
}

/**
 * Reads the agent's memory files through the door (src/storage/agentFiles.ts), again only when they changed: one
 * stat instead of a read. `skipped` reports a file the door refused, once per reader that lives long.
 */
export interface FileCache {
  /** `path` (absolute, or relative to `root`), which must be inside the agent folder `root` and not under `.kern/`. */
  readonly readString: (path: string, root: string) => Effect.Effect<string, AgentFileError>
  /**
   * For each of `paths` (as `readString` takes them), the text `readString` would answer without reading, when the
   * file is unchanged since it was read (one stat each, all in one step); undefined for any other (never read, changed,
   * missing, refused): that one goes through `readString`. A step's memory files cost one effect, not one per file.
   */
  readonly unchangedTexts: (paths: ReadonlyArray<string>, root: string) => Effect.Effect<ReadonlyArray<string | undefined>>
  /** The daily notes of agent folder `dir`, oldest first (see listNotes), listed again only when notes/ changed. */
  readonly notes: (dir: string) => Effect.Effect<ReadonlyArray<string>, PlatformError, FileSystem.FileSystem>
  readonly skipped: SkippedFiles
}

/**
 * A file is read again when its mtime or size differ from when it was read, or when its text was read too soon
 * after its mtime: a second edit of the same size inside the file system's timestamp resolution would otherwise
 * look unchanged (git's "racily clean" rule). Text read at least one resolution step after the mtime is kept, as
 * any later edit lands in a later step. The step is not known: an mtime with a part of a second comes from a file
 * system that keeps finer times (ext4, xfs, btrfs, tmpfs, APFS, NTFS: a kernel tick at most, 100 ms is ample); a
 * whole second may come from one that keeps seconds (ext3, HFS+) or two (FAT). Judged against the time of the
 * read, not of the lookup: text read inside the window stays suspect however old the file grows.
 */
export const racyWindowMs = (mtimeMs: number): number => mtimeMs % 1_000 === 0 ? 2_000 : 100

/** Whether what was read at `readAtMs` of a file (or folder) last modified at `mtimeMs` may be kept. */
const settled = (mtimeMs: number, readAtMs: number) => {
  const whole = Math.floor(mtimeMs)
  return readAtMs - whole >= racyWindowMs(whole)
}

/** The folder's identity and mtime, which an entry added, removed or renamed in it changes; undefined when absent. */
const folderStamp = (dir: string) => {
  try {
    return NodeFs.statSync(dir, { throwIfNoEntry: false })
  } catch {
    return undefined
  }
}

/** Files kept by one cache: the memory files, the latest notes and then some. */
const maxEntries = 64

export const makeFileCache = Effect.gen(function*() {
  const entries = yield* Ref.make<ReadonlyMap<string, Entry>>(new Map())
  const listings = yield* Ref.make<ReadonlyMap<string, Listing>>(new Map())
  const skipped = yield* makeSkippedFiles()
  const readString = (path: string, root: string) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const cached = (yield* Ref.get(entries)).get(path)
      if (
        cached !== undefined && settled(cached.file.mtimeMs, cached.readAtMs) &&
        (yield* Effect.sync(() => unchangedAgentFile(path, root, cached.file)))
      ) {
        return cached.text
      }
      const { bytes, ...file } = yield* readAgentFile(path, { roots: [root] })
      const text = Buffer.from(bytes).toString("utf8")
      yield* Ref.update(entries, (map) => {
        const next = new Map(map)
        // A long-lived reader meets a new daily note every day: the oldest entries go.
        if (!next.has(path) && next.size >= maxEntries) next.delete(next.keys().next().value!)
        return next.set(path, { file, text, readAtMs: now })
      })
      return text
    })
  const unchangedTexts = (paths: ReadonlyArray<string>, root: string) =>
    Effect.flatMap(Ref.get(entries), (map) =>
      Effect.sync(() =>
        paths.map((path) => {
          const cached = map.get(path)
          return cached !== undefined && settled(cached.file.mtimeMs, cached.readAtMs) && unchangedAgentFile(path, root, cached.file)
            ? cached.text
            : undefined
        })
      ))
  const notes = (dir: string) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const folder = NodePath.join(dir, "notes")
      const stamp = yield* Effect.sync(() => folderStamp(folder))
      const cached = (yield* Ref.get(listings)).get(dir)
      if (
        stamp !== undefined && cached !== undefined && stamp.dev === cached.dev && stamp.ino === cached.ino &&
        stamp.mtimeMs === cached.mtimeMs && settled(cached.mtimeMs, cached.readAtMs)
      ) {
        return cached.names
      }
      const names = yield* listNotes(dir)
      if (stamp !== undefined) {
        const listing = { dev: stamp.dev, ino: stamp.ino, mtimeMs: stamp.mtimeMs, names, readAtMs: now }
        yield* Ref.update(listings, (map) => new Map(map).set(dir, listing))
      }
      return names
    })
  return { readString, unchangedTexts, notes, skipped } satisfies FileCache
})

/** Without a cache: every read goes to the file, every skip is reported (one-shot inspection). */
export const uncachedFiles: Effect.Effect<FileCache> = Effect.succeed({
  readString: (path, root) => readAgentText(path, { roots: [root] }),
  unchangedTexts: (paths) => Effect.succeed(paths.map(() => undefined)),
  notes: listNotes,
  skipped: reportEverySkip()
})
