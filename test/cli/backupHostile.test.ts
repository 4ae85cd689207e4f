import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { pipeline } from "node:stream/promises"
import * as NodeZlib from "node:zlib"
import * as Tar from "tar-stream"
import { runKernIn } from "../support/inProcessCli.js"
import { makeTempDir } from "../support/tempDir.js"

const sha = (data: string | Buffer) => createHash("sha256").update(data).digest("hex")

interface RawEntry {
  readonly name: string
  readonly data?: string | Buffer
  readonly type?: "file" | "symlink" | "link" | "character-device" | "fifo" | "directory"
  readonly linkname?: string
  readonly size?: number
}

const manifestOf = (entries: ReadonlyArray<{ path: string; data: string | Buffer }>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    format: "kern-backup",
    formatVersion: 1,
    kernVersion: "0.1.0",
    agent: "evil",
    createdAt: "2026-11-27T00:00:00.000Z",
    secrets: false,
    head: "0".repeat(40),
    entries: entries.map(({ data, path }) => ({ path, size: Buffer.byteLength(data), sha256: sha(data) })),
    ...extra
  })

const required = [
  { path: "memory.bundle", data: "not a bundle" },
  { path: ".kern/kern.db", data: "" },
  { path: ".kern/config.json", data: "{}" }
]

/** Writes a .tar.gz of exactly these entries, as a hostile tool would. */
const archiveOf = async (entries: ReadonlyArray<RawEntry>): Promise<string> => {
  const file = NodePath.join(makeTempDir(), "evil.tar.gz")
  const pack = Tar.pack()
  const done = pipeline(pack, NodeZlib.createGzip(), NodeFs.createWriteStream(file))
  for (const entry of entries) {
    const type = entry.type ?? "file"
    if (type === "file" && entry.size !== undefined && entry.data === undefined) {
      const sink = pack.entry({ name: entry.name, size: entry.size })
      const block = Buffer.alloc(1024 * 1024)
      for (let left = entry.size; left > 0; left -= block.length) {
        if (!sink.write(left >= block.length ? block : block.subarray(0, left))) await new Promise<void>((resolve) => sink.once("drain", () => resolve()))
      }
      await new Promise<void>((resolve) => {
        sink.once("finish", () => resolve())
        sink.end(Buffer.alloc(0))
      })
    } else {
      const header = { name: entry.name, type, linkname: entry.linkname ?? "", size: 0, mode: 0o644 }
      if (type === "file") pack.entry(header, entry.data ?? "")
      else pack.entry(header)
    }
  }
  pack.finalize()
  await done
  return file
}

const files = (entries: ReadonlyArray<{ path: string; data: string | Buffer }>): Array<RawEntry> =>
  entries.map(({ data, path }) => ({ name: path, data }))

const cases: ReadonlyArray<{ readonly name: string; readonly entries: () => Array<RawEntry>; readonly says: RegExp }> = [
  {
    name: "a path with ..",
    entries: () => {
      const evil = [...required, { path: ".kern/sessions/../../escaped", data: "x" }]
      return [{ name: "kern-backup.json", data: manifestOf(evil) }, ...files(evil)]
    },
    says: /manifest is not one kern writes[\s\S]*"\.\." segment/
  },
  {
    name: "an entry with .. not in the manifest",
    entries: () => [{ name: "kern-backup.json", data: manifestOf(required) }, { name: "../escaped", data: "x" }, ...files(required)],
    says: /entry "\.\.\/escaped" is not in its manifest/
  },
  {
    name: "an absolute path",
    entries: () => [{ name: "kern-backup.json", data: manifestOf(required) }, { name: "/tmp/kern-escaped", data: "x" }, ...files(required)],
    says: /not in its manifest/
  },
  {
    name: "a symlink pointing out",
    entries: () => {
      const listed = [...required, { path: ".kern/sessions/a.jsonl", data: "" }]
      return [{ name: "kern-backup.json", data: manifestOf(listed) }, ...files(required), { name: ".kern/sessions/a.jsonl", type: "symlink", linkname: "/etc/passwd" }]
    },
    says: /is a symlink \(to \/etc\/passwd\); a kern backup holds regular files only/
  },
  {
    name: "a hard link",
    entries: () => [{ name: "kern-backup.json", data: manifestOf(required) }, { name: ".kern/config.json", type: "link", linkname: "/etc/passwd" }],
    says: /is a link \(to \/etc\/passwd\)/
  },
  {
    name: "a device file",
    entries: () => [{ name: "kern-backup.json", data: manifestOf(required) }, { name: ".kern/kern.db", type: "character-device" }],
    says: /is a character-device/
  },
  {
    name: "a FIFO",
    entries: () => [{ name: "kern-backup.json", data: manifestOf(required) }, { name: ".kern/kern.db", type: "fifo" }],
    says: /is a fifo/
  },
  {
    name: "a manifest that lies about a checksum",
    entries: () => [{ name: "kern-backup.json", data: manifestOf(required) }, ...files(required.map((e) => e.path === ".kern/config.json" ? { ...e, data: "{\"x\"" } : e))],
    says: /config.json" (is 4 bytes, but its manifest says 2|does not match the sha256)/
  },
  {
    name: "a manifest that lists an entry the archive lacks",
    entries: () => [{ name: "kern-backup.json", data: manifestOf([...required, { path: ".kern/sessions/gone.jsonl", data: "x" }]) }, ...files(required)],
    says: /lists \.kern\/sessions\/gone\.jsonl, which it does not hold/
  },
  {
    name: "no manifest first",
    entries: () => [...files(required), { name: "kern-backup.json", data: manifestOf(required) }],
    says: /first entry is "memory.bundle", not the manifest/
  },
  {
    name: "a decompression bomb (64 MB of zeros where the manifest says 2 bytes)",
    entries: () => [{ name: "kern-backup.json", data: manifestOf(required) }, { name: ".kern/config.json", size: 64 * 1024 * 1024 }],
    says: /config.json" is 67108864 bytes, but its manifest says 2/
  },
  {
    name: "a manifest that declares more than the disk holds",
    entries: () => [{ name: "kern-backup.json", data: manifestOf(required).replace("\"size\":0", "\"size\":900000000000000") }, ...files(required)],
    says: /declares .* to unpack and .* free/
  }
]

describe("kern restore and kern backup verify refuse a hostile archive", () => {
  for (const hostile of cases) {
    it.live(`${hostile.name}: refused with a clear error, nothing written outside the new folder, no folder left`, () =>
      Effect.gen(function*() {
        const archive = yield* Effect.promise(() => archiveOf(hostile.entries()))
        const parent = makeTempDir()
        const target = NodePath.join(parent, "new")
        const restored = yield* Effect.promise(() => runKernIn(["restore", archive, "--dir", target]))
        expect(restored.status, restored.stderr).toBe(1)
        expect(restored.stderr).toMatch(hostile.says)
        expect(restored.stderr).not.toContain("    at ")
        expect(NodeFs.readdirSync(parent)).toEqual([])
        expect(NodeFs.existsSync("/tmp/kern-escaped")).toBe(false)
        expect(NodeFs.readdirSync(NodePath.dirname(archive))).toEqual(["evil.tar.gz"])
        const verified = yield* Effect.promise(() => runKernIn(["backup", "verify", archive]))
        expect(verified.status, verified.stderr).toBe(1)
        expect(verified.stderr).toMatch(hostile.says)
      }))
  }

  it.live("restore refuses a folder that is not empty; backup refuses an existing output, a missing folder, a folder that is no agent", () =>
    Effect.gen(function*() {
      const archive = yield* Effect.promise(() => archiveOf([{ name: "kern-backup.json", data: manifestOf(required) }, ...files(required)]))
      const full = makeTempDir()
      NodeFs.writeFileSync(NodePath.join(full, "keep.md"), "mine")
      const refused = yield* Effect.promise(() => runKernIn(["restore", archive, "--dir", full]))
      expect(refused.status).toBe(1)
      expect(refused.stderr).toContain("is not empty: kern restore makes a new agent folder and never overwrites one")
      expect(NodeFs.readdirSync(full)).toEqual(["keep.md"])
      const noDir = yield* Effect.promise(() => runKernIn(["restore", archive]))
      expect(noDir.status).toBe(2)
      expect(noDir.stderr).toContain("kern restore FILE --dir NEW")

      const missing = yield* Effect.promise(() => runKernIn(["backup", NodePath.join(full, "nope"), "-o", NodePath.join(full, "b.tgz")]))
      expect(missing.status).toBe(1)
      expect(missing.stderr).toContain("does not exist")
      const notAgent = yield* Effect.promise(() => runKernIn(["backup", full, "-o", NodePath.join(full, "b.tgz")]))
      expect(notAgent.status).toBe(2)
      expect(notAgent.stderr).toContain("is not an agent folder")
      const noOutput = yield* Effect.promise(() => runKernIn(["backup", full]))
      expect(noOutput.status).toBe(2)
      expect(noOutput.stderr).toContain("kern backup [dir] -o FILE")
    }))
})
