/**
 * Reading an archive that may be hostile: every entry is checked before a byte of it is written, the manifest first.
 *
 * - The first entry is the manifest (at most manifestMaxBytes); every path in it is one a kern backup holds
 *   (entryPaths.ts: no `..`, no absolute path, nothing but the manifest, bundle, kern.db, config, .env, sessions and
 *   artifacts), each listed once.
 * - Every other entry is a regular file (a symlink, hard link, device, FIFO or folder is refused), listed in the
 *   manifest, met once, of the size the manifest gives; its sha256 is checked as it streams; an entry the manifest
 *   lists but the archive lacks is refused at the end.
 * - A bomb: the bytes gunzip gives are counted, and past what the manifest declares (plus tar's own headers) reading
 *   stops. The caller checks the declared total against the free disk before anything is written.
 *
 * Node's streams are the edge here: the function is async and its callers wrap it in Effect.
 */
import { createHash } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Transform, type Writable } from "node:stream"
import { pipeline } from "node:stream/promises"
import * as NodeZlib from "node:zlib"
import { Either, ParseResult, Schema } from "effect"
import * as Tar from "tar-stream"
import { bundleEntry, configEntry, databaseEntry, envEntry } from "./entryPaths.js"
import { type BackupManifest, ManifestJson, manifestMaxBytes, manifestName, type ManifestEntry } from "./manifest.js"

/** The archive is not a kern backup, is damaged, or is hostile; the message says which entry and why. */
export class ArchiveRefused extends Error {}

/** tar's own bytes around an entry's content (header, padding, a pax header for a long name): generous. */
const entryOverhead = 8 * 1024
/** The end-of-archive blocks and tar's record padding. */
const endOverhead = 64 * 1024

export interface ReadOptions {
  /** Told the manifest before any other entry is read; throws (an ArchiveRefused, say) to stop. */
  readonly onManifest: (manifest: BackupManifest) => Promise<void> | void
  /** The file an entry is written to (created; it must not exist yet), or undefined to only check it. */
  readonly destination: (entry: ManifestEntry) => string | undefined
  /** Told the content bytes read so far. */
  readonly progress?: (bytes: number) => void
}

const decodeManifest = Schema.decodeUnknownEither(ManifestJson)

/** The manifest's own problems: paths twice, a required entry missing, secrets said and not there (or the reverse). */
const manifestProblem = (manifest: BackupManifest): string | undefined => {
  const paths = new Set<string>()
  for (const entry of manifest.entries) {
    if (paths.has(entry.path)) return `it lists ${entry.path} twice`
    paths.add(entry.path)
  }
  const missing = [bundleEntry, databaseEntry, configEntry].filter((path) => !paths.has(path))
  if (missing.length > 0) return `it lists no ${missing.join(", ")}`
  if (paths.has(envEntry) !== manifest.secrets) return `it says secrets: ${manifest.secrets}, and lists ${envEntry} ${paths.has(envEntry) ? "" : "not "}`
  return undefined
}

const readAll = async (stream: AsyncIterable<unknown>): Promise<Buffer> => {
  const chunks: Array<Uint8Array> = []
  for await (const chunk of stream) chunks.push(chunk as Uint8Array)
  return Buffer.concat(chunks)
}

/** Reads `archive`, checking it throughout; returns its manifest once every entry has been read and checked. */
export const readArchive = async (archive: string, options: ReadOptions): Promise<BackupManifest> => {
  const refuse = (why: string): never => {
    throw new ArchiveRefused(why)
  }
  let limit = manifestMaxBytes + entryOverhead
  let inflated = 0
  const extract = Tar.extract()
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      inflated += chunk.byteLength
      if (inflated > limit) {
        done(new ArchiveRefused(
          `it unpacks to more than its manifest declares (over ${limit.toLocaleString("en-US")} bytes): a decompression bomb, or not a kern backup`
        ))
      } else done(null, chunk)
    }
  })
  const input = NodeFs.createReadStream(archive)
  const piped = pipeline(input, NodeZlib.createGunzip(), counter, extract).then(() => undefined, (error: unknown) => error)
  const damaged = async (): Promise<never> => {
    const error = await piped
    if (error instanceof ArchiveRefused) throw error
    throw new ArchiveRefused(`it is damaged or not a kern backup (${error instanceof Error ? error.message : String(error)})`)
  }

  let manifest: BackupManifest | undefined
  const expected = new Map<string, ManifestEntry>()
  const seen = new Set<string>()
  let read = 0
  try {
    for await (const entry of extract) {
      const header = entry.header
      const name = header.name
      const type = header.type ?? "file"
      if (manifest === undefined) {
        if (name !== manifestName || type !== "file") refuse(`its first entry is ${JSON.stringify(name)}, not the manifest (${manifestName}): not a kern backup`)
        if ((header.size ?? 0) > manifestMaxBytes) refuse(`its manifest is ${header.size} bytes, over ${manifestMaxBytes}`)
        const decoded = decodeManifest((await readAll(entry)).toString("utf8"))
        if (Either.isLeft(decoded)) {
          refuse(`its manifest is not one kern writes: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`)
        } else {
          manifest = decoded.right
        }
        const problem = manifestProblem(manifest!)
        if (problem !== undefined) refuse(`its manifest is inconsistent: ${problem}`)
        for (const listed of manifest!.entries) expected.set(listed.path, listed)
        await options.onManifest(manifest!)
        limit = inflated + manifest!.totalBytes + entryOverhead * manifest!.entries.length + endOverhead
        continue
      }
      const shown = JSON.stringify(name)
      if (type !== "file") refuse(`its entry ${shown} is a ${type}${header.linkname ? ` (to ${header.linkname})` : ""}; a kern backup holds regular files only`)
      const listed = expected.get(name) ?? refuse(`its entry ${shown} is not in its manifest`)
      if (seen.has(name)) refuse(`it holds ${shown} twice`)
      seen.add(name)
      if (header.size !== listed.size) refuse(`its entry ${shown} is ${header.size} bytes, but its manifest says ${listed.size}`)
      const hash = createHash("sha256")
      const target = options.destination(listed)
      let sink: Writable | undefined
      if (target !== undefined) {
        NodeFs.mkdirSync(NodePath.dirname(target), { recursive: true, mode: 0o700 })
        sink = NodeFs.createWriteStream(target, { flags: "wx", mode: 0o600 })
      }
      const meter = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          hash.update(chunk)
          options.progress?.((read += chunk.byteLength))
          done(null, sink === undefined ? undefined : chunk)
        }
      })
      if (sink === undefined) {
        await pipeline(entry, meter, async (source: AsyncIterable<unknown>) => {
          for await (const _ of source) void _
        })
      } else {
        await pipeline(entry, meter, sink)
      }
      if (hash.digest("hex") !== listed.sha256) refuse(`its entry ${shown} does not match the sha256 its manifest gives`)
    }
  } catch (error) {
    input.destroy()
    if (error instanceof ArchiveRefused) throw error
    // The extractor failing (gunzip, tar) surfaces here as its iterator's error; the pipeline knows which.
    if (await piped !== undefined) return damaged()
    throw error
  }
  const failure = await piped
  if (failure !== undefined) return damaged()
  if (manifest === undefined) refuse("it holds no manifest: not a kern backup")
  const absent = manifest!.entries.filter((entry) => !seen.has(entry.path)).map((entry) => entry.path)
  if (absent.length > 0) refuse(`its manifest lists ${absent.slice(0, 5).join(", ")}${absent.length > 5 ? ", …" : ""}, which it does not hold`)
  return manifest!
}
