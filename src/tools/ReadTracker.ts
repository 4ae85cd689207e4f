import { Effect, HashMap, Option, Ref } from "effect"
import * as NodeCrypto from "node:crypto"

/** What a read saw of a file: enough to tell later whether it changed. */
export interface FileSnapshot {
  readonly size: number
  readonly sha256: string
}

export const snapshotOf = (bytes: Uint8Array): FileSnapshot => ({
  size: bytes.byteLength,
  sha256: NodeCrypto.createHash("sha256").update(bytes).digest("hex")
})

const key = (sessionId: string, path: string) => `${sessionId}\u0000${path}`

/**
 * Per session, the files the model has read (or written) and what they held then, so write and edit can refuse
 * to overwrite a file the model has not seen or that changed on disk since.
 */
export class ReadTracker extends Effect.Service<ReadTracker>()("kern/tools/ReadTracker", {
  effect: Effect.gen(function*() {
    const seen = yield* Ref.make(HashMap.empty<string, FileSnapshot>())
    return {
      record: (sessionId: string, path: string, snapshot: FileSnapshot) =>
        Ref.update(seen, HashMap.set(key(sessionId, path), snapshot)),
      lookup: (sessionId: string, path: string) =>
        Effect.map(Ref.get(seen), (map) => Option.getOrUndefined(HashMap.get(map, key(sessionId, path)))),
      forgetSession: (sessionId: string) =>
        Ref.update(seen, HashMap.filter((_, k) => !k.startsWith(`${sessionId}\u0000`)))
    } as const
  })
}) {}
