/**
 * The archive's bytes: tar (tar-stream) through gzip (node:zlib) into a file, one entry streamed at a time, so the
 * archive is never held in memory whatever the size of kern.db or the sessions. Node's streams are the edge here:
 * the functions are async and their callers wrap them in Effect.
 */
import { createHash } from "node:crypto"
import * as NodeFs from "node:fs"
import { Transform } from "node:stream"
import { pipeline } from "node:stream/promises"
import * as NodeZlib from "node:zlib"
import * as Tar from "tar-stream"
import { manifestName } from "./manifest.js"

/** A file to archive: its entry path, where it is, and its size and sha256 as the manifest says. */
export interface ArchivedFile {
  readonly entry: string
  readonly file: string
  readonly size: number
  readonly sha256: string
}

/** A file no longer held what it held when it was checksummed (rewritten, not appended to, or cut short). */
export class FileChanged extends Error {
  constructor(readonly entry: string) {
    super(`${entry} changed while it was backed up`)
  }
}

const blockSize = 64 * 1024

/**
 * Where a session file's complete lines end within its first `size` bytes: a line the agent is writing at this
 * moment is left out, as a crash would leave it out.
 */
const completeLinesEnd = (fd: number, size: number): number => {
  const block = Buffer.allocUnsafe(blockSize)
  let end = size
  while (end > 0) {
    const start = Math.max(0, end - blockSize)
    const read = NodeFs.readSync(fd, block, 0, end - start, start)
    const at = block.subarray(0, read).lastIndexOf(0x0a)
    if (at >= 0) return start + at + 1
    end = start
  }
  return 0
}

/**
 * The size and sha256 of `file` as it is now: the whole file, or for an append-only session (`.jsonl`) its
 * complete lines. The archive takes exactly these bytes later, so a session the agent appends to meanwhile is
 * still taken as it was here.
 */
export const snapshotFile = async (entry: string, file: string): Promise<ArchivedFile> => {
  const fd = NodeFs.openSync(file, "r")
  let size: number
  try {
    const stat = NodeFs.fstatSync(fd)
    size = file.endsWith(".jsonl") ? completeLinesEnd(fd, stat.size) : stat.size
  } finally {
    NodeFs.closeSync(fd)
  }
  const hash = createHash("sha256")
  if (size > 0) {
    for await (const chunk of NodeFs.createReadStream(file, { start: 0, end: size - 1, highWaterMark: blockSize })) {
      hash.update(chunk as Buffer)
    }
  }
  return { entry, file, size, sha256: hash.digest("hex") }
}

/** Passes bytes through, hashing and counting them. */
const metered = (onBytes: (count: number) => void) => {
  const hash = createHash("sha256")
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk)
      onBytes(chunk.byteLength)
      done(null, chunk)
    }
  })
  return { stream, digest: () => hash.digest("hex") }
}

/**
 * Writes the archive to `target` (created 0600; it must not exist): the manifest first, then each file's first
 * `size` bytes, checked against its sha256 as they go. `progress` is told the bytes written so far.
 */
export const writeArchive = async (
  target: string,
  manifest: string,
  files: ReadonlyArray<ArchivedFile>,
  progress: (bytes: number) => void
): Promise<void> => {
  const pack = Tar.pack()
  const out = NodeFs.createWriteStream(target, { flags: "wx", mode: 0o600 })
  const written = pipeline(pack, NodeZlib.createGzip({ level: 6 }), out)
  // Whatever ends the entries early, the pipeline's own failure (a full disk) is the one to report.
  const entries = (async () => {
    const mtime = new Date()
    pack.entry({ name: manifestName, size: Buffer.byteLength(manifest), mode: 0o600, mtime }, manifest)
    let done = 0
    for (const file of files) {
      if (file.size === 0) {
        pack.entry({ name: file.entry, size: 0, mode: 0o600, mtime }, Buffer.alloc(0))
        continue
      }
      const sink = pack.entry({ name: file.entry, size: file.size, mode: 0o600, mtime })
      const meter = metered((count) => progress((done += count)))
      try {
        await pipeline(NodeFs.createReadStream(file.file, { start: 0, end: file.size - 1, highWaterMark: blockSize }), meter.stream, sink)
      } catch (error) {
        // tar-stream's "Size mismatch": the file was cut short since it was checksummed.
        throw error instanceof Error && error.message === "Size mismatch" ? new FileChanged(file.entry) : error
      }
      if (meter.digest() !== file.sha256) throw new FileChanged(file.entry)
    }
    pack.finalize()
  })()
  try {
    await entries
  } catch (error) {
    pack.destroy(error as Error)
    await written.catch(() => undefined)
    throw error
  }
  await written
  // On disk before it is renamed into place: a crash leaves the old archive or the whole new one.
  const fd = NodeFs.openSync(target, "r")
  try {
    NodeFs.fsyncSync(fd)
  } finally {
    NodeFs.closeSync(fd)
  }
}
