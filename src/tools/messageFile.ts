import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { confinedAudience } from "../kernel/Audience.js"
import { RunContext } from "../kernel/RunContext.js"
import { toolFailure } from "../kernel/ToolFailure.js"
import { isLinked } from "../media/mediaLinks.js"
import { prunedText } from "../media/MediaRejected.js"
import { MediaStore } from "../media/MediaStore.js"
import type { Attachment } from "../session/messages.js"
import { readAgentFile } from "../storage/agentFiles.js"
import { ArtifactStore } from "./ArtifactStore.js"
import type { OutgoingFile } from "./Channels.js"
import { agentFileFailure } from "./failures.js"
import { Workspace } from "./Workspace.js"

/** A file the message tool sends: its bytes for the channel, and its media store reference for everyone watching. */
export interface ResolvedFile {
  readonly file: OutgoingFile
  readonly attachment: Attachment
}

const mediaId = /^med_[0-9a-f]{24}$/
const artifactId = /^art_[0-9a-f]{24}$/

/**
 * What `file` names: a media id (a file that came or went in this conversation: a non-operator's reaches only its
 * own), an artifact id (a compacted tool output, under the same rule) or a workspace path, read through the workspace
 * guard and the agent-file door every read uses (never `.kern/`). Over `media.maxFileBytes` it is refused. The file
 * is stored in the media store, so the web UI and the session refer to it by id.
 */
export const resolveFile = (ref: string) =>
  Effect.gen(function*() {
    const media = yield* MediaStore
    const ctx = yield* RunContext
    const own = confinedAudience(ctx)
    const cap = media.limits.maxFileBytes
    const named = yield* Effect.gen(function*() {
      if (mediaId.test(ref)) {
        const allowed = own === undefined || (yield* isLinked(ref, own.conversationId).pipe(
          Effect.mapError((error) => toolFailure("UNEXPECTED", `could not look up ${ref}: ${error.message}`))
        ))
        const missing = toolFailure("NOT_FOUND", `no file ${ref} in this conversation; the message was not sent`)
        if (!allowed) return yield* missing
        // Linked to this conversation: that retention pruned it may be said, and when.
        const bytes = yield* media.read(ref).pipe(Effect.mapError((error) =>
          error.prunedAtMs === undefined
            ? missing
            : toolFailure("NOT_FOUND", `${ref} was ${prunedText(error.prunedAtMs)}; the message was not sent`)
        ))
        return { name: ref, bytes }
      }
      if (artifactId.test(ref)) {
        const store = yield* ArtifactStore
        const text = yield* store.get(ref, own?.conversationId)
        return { name: `${ref}.txt`, bytes: new TextEncoder().encode(text) }
      }
      const workspace = yield* Workspace
      const resolved = yield* workspace.resolve(ref)
      const read = yield* readAgentFile(resolved.path, workspace.fileOptions(resolved, cap)).pipe(
        Effect.mapError((error) =>
          error.reason === "too-large"
            ? toolFailure("VALIDATION_ERROR", `${resolved.display} is over ${cap} bytes, more than a message may carry (config media.maxFileBytes); the message was not sent`)
            : agentFileFailure(error)
        )
      )
      const slash = resolved.display.lastIndexOf("/")
      return { name: resolved.display.slice(slash + 1), bytes: read.bytes }
    })
    const attachment = yield* media.ingest(named).pipe(
      Effect.mapError((rejected) => toolFailure("VALIDATION_ERROR", `${rejected.message}; the message was not sent`))
    )
    return { file: { name: attachment.name, bytes: named.bytes, mediaType: attachment.mediaType }, attachment } satisfies ResolvedFile
  }).pipe(Effect.withSpan("kern.tools.message.file"))

export type ResolveFileRequirements = MediaStore | RunContext | ArtifactStore | Workspace | SqlClient.SqlClient
