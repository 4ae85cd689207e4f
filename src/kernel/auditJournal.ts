import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { privateDirMode, privateFileMode } from "../storage/privateFiles.js"
import { processRunning, readProcessStat } from "../storage/processState.js"

/**
 * Audit journals: `.kern/audit/<pid>-<start>-<random>-m<machine>.jsonl`, one per event log (a process may run several), each
 * line one audit event (eventRows.ts). A tool call's event is one `write` of its line before the call returns: no
 * fsync, since the page cache keeps what a process wrote when the process is killed (kill -9, a crash), and a
 * transaction per call was the audit's whole cost. The event log moves the lines into kern.db in batches
 * (journalIngest.ts) and deletes a journal once all of it is there.
 *
 * The file operations are synchronous on purpose: an append is one small write on the tool call's path, where a
 * fiber hop to a thread pool would cost more than the write.
 */

/** Where the journals of the kern.db at `databaseFile` live. */
export const journalFolder = (databaseFile: string): string => NodePath.join(NodePath.dirname(databaseFile), "audit")

const namePattern = /^(\d+)-(\d+)-([0-9a-f]+)(?:-m([0-9a-f]{8}))?\.jsonl$/

/**
 * This machine, as a journal's name carries it: runners on several machines may share an agent folder (kern.db on
 * PostgreSQL, the folders on a shared filesystem), and a pid says nothing of a process on another machine.
 */
export const machineTag = (): string => NodeCrypto.createHash("sha256").update(NodeOs.hostname()).digest("hex").slice(0, 8)

/**
 * A journal's name: its writer's pid and start time (0 where the system does not tell), a random part, and its
 * machine (older journals have none: they are this machine's).
 */
export const journalName = (pid: number, start: string | undefined, random: string, machine: string = machineTag()): string =>
  `${pid}-${start ?? "0"}-${random}-m${machine}.jsonl`

/** The journals in `folder`, by name; none when there is no folder. */
export const listJournals = (folder: string): ReadonlyArray<string> => {
  try {
    return NodeFs.readdirSync(folder).filter((name) => namePattern.test(name)).sort()
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return []
    throw error
  }
}

/**
 * Whether the process that wrote the journal `name` may still append to it: its pid runs and, where /proc tells start
 * times, it is the same process (a pid reused by another program, as in a container where kern is always pid 1, is
 * not the writer).
 */
export const writerRunning = (name: string): boolean => {
  const match = namePattern.exec(name)
  if (match === null) return false
  // Another machine's writer cannot be looked at from here: it is taken as running, so its journal is read (its
  // events reach kern.db) but never retired from here; its own machine's next kern retires it.
  if (match[4] !== undefined && match[4] !== machineTag()) return true
  const pid = Number(match[1])
  if (!processRunning(pid)) return false
  const start = match[2]
  if (start === "0") return true
  const now = readProcessStat(pid)?.start
  return now === undefined || now === start
}

const errnoOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined

/** A journal this process appends to. */
export interface JournalWriter {
  readonly name: string
  readonly path: string
  /** Bytes appended so far: where the next line starts. */
  readonly size: () => number
  /**
   * Appends one line (its text ends with a newline) in one write. A failed or short write (a full disk) leaves the
   * journal unusable, its last line possibly torn; the caller keeps the event elsewhere. Returns whether it is written.
   */
  readonly append: (line: string) => boolean
  /** Why an append failed, once one has: nothing more goes to this journal. */
  readonly broken: () => string | undefined
  readonly close: () => void
}

/** Creates the journal (0600, in a 0700 folder) and opens it for appending; throws what the file system says. */
export const openJournal = (folder: string, name: string): JournalWriter => {
  NodeFs.mkdirSync(folder, { recursive: true, mode: privateDirMode })
  const path = NodePath.join(folder, name)
  // "ax": a name of this process's own, never an older file's; the mode is given at creation, whatever the umask.
  const fd = NodeFs.openSync(path, "ax", privateFileMode)
  let size = 0
  let failed: string | undefined
  let open = true
  return {
    name,
    path,
    size: () => size,
    append: (line) => {
      if (failed !== undefined || !open) return false
      try {
        // The text as it is (no Buffer made first); its length in bytes is looked at once it is written.
        const written = NodeFs.writeSync(fd, line)
        size += written
        const length = Buffer.byteLength(line, "utf8")
        if (written === length) return true
        failed = `a short write (${written} of ${length} bytes)`
      } catch (error) {
        // ENOSPC, EIO: what is on disk stays readable up to its last whole line.
        failed = error instanceof Error ? error.message : String(error)
      }
      return false
    },
    broken: () => failed,
    close: () => {
      if (!open) return
      open = false
      NodeFs.closeSync(fd)
    }
  }
}

/** One whole line of a journal, and the byte it starts at. */
export interface JournalLine {
  readonly text: string
  readonly at: number
}

/** What a journal holds past an offset. */
export interface Unread {
  /** Its whole lines (ended by a newline), empty ones left out. */
  readonly lines: ReadonlyArray<JournalLine>
  /** The byte after the last whole line read: the new offset once the lines are in kern.db. */
  readonly end: number
  /** The file's size when read: bytes past `end` are a line still being written, or torn. */
  readonly size: number
}

/** How much of a journal one read takes at most (a longer line is read whole all the same). */
const readChunk = 1 << 20

/** The whole lines of the journal at `path` from byte `offset` on, at most about a MiB of them; throws what the file system says. */
export const readUnread = (path: string, offset: number): Unread => {
  const fd = NodeFs.openSync(path, "r")
  try {
    const size = NodeFs.fstatSync(fd).size
    if (size <= offset) return { lines: [], end: offset, size }
    let length = Math.min(size - offset, readChunk)
    let buffer = Buffer.alloc(length)
    NodeFs.readSync(fd, buffer, 0, length, offset)
    if (buffer.lastIndexOf(10) < 0 && length < size - offset) {
      length = size - offset
      buffer = Buffer.alloc(length)
      NodeFs.readSync(fd, buffer, 0, length, offset)
    }
    const lines: Array<JournalLine> = []
    let start = 0
    for (let newline = buffer.indexOf(10); newline >= 0; newline = buffer.indexOf(10, start)) {
      if (newline > start) lines.push({ text: buffer.toString("utf8", start, newline), at: offset + start })
      start = newline + 1
    }
    return { lines, end: offset + start, size }
  } finally {
    NodeFs.closeSync(fd)
  }
}

/** A journal's whole lines past an offset as one JSON array: the batch kern.db takes (eventRows.ts). */
export interface UnreadBatch {
  /** The lines as the UTF-8 text of a JSON array of them; undefined when there is none. */
  readonly batch: Buffer | undefined
  /** The byte after the last whole line read. */
  readonly end: number
  /** The file's size when read. */
  readonly size: number
}

/**
 * As `readUnread`, for a journal whose every line is an event as it was written (the event log's own, which it wrote
 * itself): the lines come back as one JSON array in the bytes read, each newline between two lines turned into a
 * comma, with no string made per line nor for the batch (a batch of 2,000 events was 2,000 strings, their join and
 * its encoding back to UTF-8 for SQLite). Undefined when a line is empty, which a journal this log wrote never has:
 * the caller reads it line by line then.
 */
export const readUnreadBatch = (path: string, offset: number): UnreadBatch | undefined => {
  const fd = NodeFs.openSync(path, "r")
  try {
    const size = NodeFs.fstatSync(fd).size
    if (size <= offset) return { batch: undefined, end: offset, size }
    let length = Math.min(size - offset, readChunk)
    // One byte before the lines: the array's opening bracket.
    let buffer = Buffer.allocUnsafe(length + 1)
    buffer[0] = 0x5b // [
    NodeFs.readSync(fd, buffer, 1, length, offset)
    if (buffer.lastIndexOf(10) < 0 && length < size - offset) {
      length = size - offset
      buffer = Buffer.allocUnsafe(length + 1)
      buffer[0] = 0x5b
      NodeFs.readSync(fd, buffer, 1, length, offset)
    }
    const last = buffer.lastIndexOf(10)
    if (last < 0) return { batch: undefined, end: offset, size }
    for (let newline = buffer.indexOf(10, 1), start = 1; newline >= 0; newline = buffer.indexOf(10, start)) {
      if (newline === start) return undefined
      buffer[newline] = newline === last ? 0x5d /* ] */ : 0x2c /* , */
      start = newline + 1
      if (newline === last) break
    }
    return { batch: buffer.subarray(0, last + 1), end: offset + last, size }
  } finally {
    NodeFs.closeSync(fd)
  }
}

/** Deletes a journal; one already gone is fine. Throws what else the file system says. */
export const removeJournal = (folder: string, name: string): void => {
  try {
    NodeFs.unlinkSync(NodePath.join(folder, name))
  } catch (error) {
    if (errnoOf(error) !== "ENOENT") throw error
  }
}

/** A journal's size; undefined when it is gone (or cannot be looked at: the read says why). */
export const journalSize = (folder: string, name: string): number | undefined => {
  try {
    return NodeFs.statSync(NodePath.join(folder, name)).size
  } catch {
    return undefined
  }
}

/** Whether the journal file is there. */
export const journalExists = (folder: string, name: string): boolean => NodeFs.existsSync(NodePath.join(folder, name))
