import { transaction } from "../storage/transaction.js"
import { FileSystem, Path } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import * as NodeCrypto from "node:crypto"
import { toolFailure } from "../kernel/ToolFailure.js"
import { conversationOfSession } from "../session/conversationIds.js"
import { privateModes } from "../storage/privateFiles.js"
import { atomicWrite } from "../storage/atomicWrite.js"
import { Workspace } from "./Workspace.js"

export const ArtifactId = Schema.String.pipe(Schema.pattern(/^art_[0-9a-f]{24}$/), Schema.brand("ArtifactId"))
export type ArtifactId = typeof ArtifactId.Type

export interface StoredArtifact {
  readonly artifactId: ArtifactId
  readonly bytes: number
  /** The first tool output of this session with the same content, when this one repeats it. */
  readonly duplicateOf?: ArtifactId
}

const ArtifactRow = Schema.Struct({ sha256: Schema.String, bytes: Schema.Number, prunedAtMs: Schema.NullOr(Schema.Number) })
const ArtifactUse = Schema.Struct({ sessionId: Schema.String })

/** What reopening an artifact retention pruned says: it existed, and was removed on purpose. */
export const prunedMessage = (artifactId: string, prunedAtMs: number) =>
  `artifact ${artifactId} was pruned by retention on ${new Date(prunedAtMs).toISOString().slice(0, 10)} ` +
  `(config retention.artifacts); its output is no longer kept: run the tool again if it is still needed`

const unexpected = (what: string) => (error: { readonly message: string }) =>
  toolFailure("UNEXPECTED", `artifact store: could not ${what}: ${error.message}`)

/**
 * Full tool outputs, content-addressed under `.kern/artifacts/<sha256>.txt` and indexed in kern.db, so a compacted
 * output can be reopened later, also after a restart. Each session remembers which outputs it has seen.
 */
export class ArtifactStore extends Effect.Service<ArtifactStore>()("kern/tools/ArtifactStore", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const workspace = yield* Workspace
    const fileOf = (sha256: string) => path.join(workspace.artifactsDir, `${sha256}.txt`)

    const put = Effect.fn("kern.tools.ArtifactStore.put")(function*(input: {
      readonly sessionId: string
      readonly toolId: string
      readonly text: string
    }) {
      const data = new TextEncoder().encode(input.text)
      const sha256 = NodeCrypto.createHash("sha256").update(data).digest("hex")
      const artifactId = ArtifactId.make(`art_${sha256.slice(0, 24)}`)
      const now = yield* Clock.currentTimeMillis
      const onDisk = yield* fs.exists(fileOf(sha256)).pipe(Effect.mapError(unexpected("check the artifact file")))
      if (!onDisk) {
        yield* atomicWrite(fileOf(sha256), data, undefined, privateModes).pipe(
          Effect.provideService(FileSystem.FileSystem, fs),
          Effect.provideService(Path.Path, path),
          Effect.mapError(unexpected("write the artifact file"))
        )
      }
      let lines = 1
      for (let i = 0; i < input.text.length; i++) if (input.text.charCodeAt(i) === 10) lines++
      const earlier = yield* transaction(sql)(Effect.gen(function*() {
        // Seen again: a use, and one retention had pruned is back (its file was written again above).
        yield* sql`INSERT INTO tool_artifacts (artifact_id, sha256, bytes, lines, created_at_ms, last_used_at_ms)
          VALUES (${artifactId}, ${sha256}, ${data.byteLength}, ${lines}, ${now}, ${now})
          ON CONFLICT (artifact_id) DO UPDATE SET last_used_at_ms = excluded.last_used_at_ms, pruned_at_ms = NULL`
        const seen = yield* sql`SELECT tool_id FROM tool_artifact_uses
          WHERE session_id = ${input.sessionId} AND artifact_id = ${artifactId}`
        if (seen.length === 0) {
          yield* sql`INSERT INTO tool_artifact_uses (session_id, artifact_id, tool_id, first_seen_at_ms)
            VALUES (${input.sessionId}, ${artifactId}, ${input.toolId}, ${now})`
        }
        return seen
      })).pipe(Effect.mapError(unexpected("index the artifact")))
      const stored: StoredArtifact = { artifactId, bytes: data.byteLength }
      return earlier.length === 0 ? stored : { ...stored, duplicateOf: artifactId }
    })

    /** Whether a session of `conversation` saw the artifact (its content is that conversation's own). */
    const seenIn = (artifactId: string, conversation: string) =>
      sql`SELECT session_id FROM tool_artifact_uses WHERE artifact_id = ${artifactId}`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(ArtifactUse))),
        Effect.map((uses) => uses.some((use) => conversationOfSession(use.sessionId) === conversation)),
        Effect.mapError(unexpected("look up the artifact's sessions"))
      )

    /**
     * An artifact's full text; with `conversation`, only one a session of that conversation saw: a non-operator's
     * conversation reopens its own tool outputs, never the operator's (an unknown id and another's read alike).
     */
    const get = Effect.fn("kern.tools.ArtifactStore.get")(function*(artifactId: string, conversation?: string) {
      if (conversation !== undefined && !(yield* seenIn(artifactId, conversation))) {
        return yield* toolFailure(
          "NOT_FOUND",
          `no artifact ${artifactId} in this conversation; only the outputs of this conversation's own tool calls can be reopened here`
        )
      }
      const rows = yield* sql`SELECT sha256, bytes, pruned_at_ms FROM tool_artifacts WHERE artifact_id = ${artifactId}`.pipe(
        Effect.mapError(unexpected("look up the artifact"))
      )
      if (rows.length === 0) {
        return yield* toolFailure("NOT_FOUND", `no artifact ${artifactId}; artifact ids look like art_ followed by 24 hex digits`)
      }
      const row = yield* Schema.decodeUnknown(ArtifactRow)(rows[0]).pipe(Effect.mapError(unexpected("decode the artifact index")))
      if (row.prunedAtMs !== null) return yield* toolFailure("NOT_FOUND", prunedMessage(artifactId, row.prunedAtMs))
      return yield* fs.readFileString(fileOf(row.sha256)).pipe(
        Effect.mapError(() => toolFailure("NOT_FOUND", `artifact ${artifactId} is indexed but its file is gone from ${workspace.artifactsDir}`))
      )
    })

    return { put, get } as const
  })
}) {}
