import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { BackupError } from "./BackupError.js"
import { integrityProblems } from "./databaseCopy.js"
import { bundleEntry, databaseEntry } from "./entryPaths.js"
import { verifyBundle } from "./memoryBundle.js"
import { fitsOn, readBackup } from "./readBackup.js"
import { stagingDir } from "./stagingDir.js"

export interface VerifyReport {
  readonly file: string
  readonly agent: string
  readonly kernVersion: string
  readonly createdAt: string
  readonly entries: number
  readonly bytes: number
  readonly secrets: boolean
  readonly refs: number
}

/**
 * `kern backup verify`: every entry read and checked against the manifest (archiveReader.ts), then the memory bundle
 * verified by git and kern.db checked by SQLite's integrity_check, both on copies in a temporary folder.
 */
export const verifyBackup = Effect.fn("kern.backup.verify")(function*(file: string) {
  const scratch = yield* stagingDir(NodeOs.tmpdir(), "kern-verify-")
  const extracted = (entry: string) => NodePath.join(scratch, NodePath.basename(entry))
  const sizeOf = (manifest: { readonly entries: ReadonlyArray<{ readonly path: string; readonly size: number }> }, path: string) =>
    manifest.entries.find((entry) => entry.path === path)?.size ?? 0
  const manifest = yield* readBackup(file, {
    onManifest: fitsOn(scratch, (manifest) => sizeOf(manifest, bundleEntry) + sizeOf(manifest, databaseEntry)),
    destination: (entry) => (entry.path === bundleEntry || entry.path === databaseEntry ? extracted(entry.path) : undefined)
  })
  const repo = NodePath.join(scratch, "repo")
  NodeFs.mkdirSync(repo)
  const heads = yield* verifyBundle(extracted(bundleEntry), repo)
  const damage = yield* integrityProblems(extracted(databaseEntry))
  if (damage.length > 0) {
    return yield* new BackupError({ reason: "refused", message: `${file}: its kern.db fails SQLite's integrity check: ${damage.join("; ")}` })
  }
  return {
    file,
    agent: manifest.agent,
    kernVersion: manifest.kernVersion,
    createdAt: manifest.createdAt,
    entries: manifest.entries.length,
    bytes: manifest.totalBytes,
    secrets: manifest.secrets,
    refs: heads.filter((head) => head.ref !== "HEAD").length
  } satisfies VerifyReport
}, Effect.scoped)
