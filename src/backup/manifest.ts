import { Schema } from "effect"
import { entryPathProblem } from "./entryPaths.js"

/** The archive's first entry: what it holds, so that every other entry is checked against it as it is read. */
export const manifestName = "kern-backup.json"

/** The manifest is read into memory: past this it is not a manifest kern wrote (100,000 entries fit in ~20 MB). */
export const manifestMaxBytes = 32 * 1024 * 1024

const Sha256 = Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/), Schema.annotations({ description: "a sha256 in hex" }))

const EntryPath = Schema.String.pipe(
  Schema.filter((path) => entryPathProblem(path) ?? true),
  Schema.annotations({ description: "an entry path kern writes" })
)

export const ManifestEntry = Schema.Struct({
  path: EntryPath,
  size: Schema.Int.pipe(Schema.nonNegative()),
  sha256: Sha256
})
export type ManifestEntry = typeof ManifestEntry.Type

export class BackupManifest extends Schema.Class<BackupManifest>("BackupManifest")({
  format: Schema.Literal("kern-backup"),
  formatVersion: Schema.Literal(1),
  kernVersion: Schema.String,
  agent: Schema.String,
  createdAt: Schema.String,
  /** Whether `.kern/.env` is in it (`kern backup --include-secrets`). */
  secrets: Schema.Boolean,
  /** The memory repository's HEAD commit when the bundle was made. */
  head: Schema.String,
  entries: Schema.Array(ManifestEntry)
}) {
  get totalBytes(): number {
    return this.entries.reduce((sum, entry) => sum + entry.size, 0)
  }
}

export const ManifestJson = Schema.parseJson(BackupManifest)
