import { Schema } from "effect"
import * as NodeCrypto from "node:crypto"

/** What a read saw of a file: enough to tell later whether it changed. */
export const FileSnapshot = Schema.Struct({
  size: Schema.Number,
  sha256: Schema.String
})
export type FileSnapshot = typeof FileSnapshot.Type

export const snapshotOf = (bytes: Uint8Array): FileSnapshot => ({
  size: bytes.byteLength,
  sha256: NodeCrypto.createHash("sha256").update(bytes).digest("hex")
})

export const sameSnapshot = (a: FileSnapshot, b: FileSnapshot): boolean => a.size === b.size && a.sha256 === b.sha256
