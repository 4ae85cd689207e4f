import { Effect } from "effect"
import type { Attachment } from "../session/messages.js"
import type { MediaRejected } from "./MediaRejected.js"
import { type IncomingFile, MediaStore } from "./MediaStore.js"

/**
 * The files of one message stored and described, in order: refused together over `media.maxTurnBytes` before any is
 * stored, and refused whole when one of them is (the sender is told which, and nothing is queued).
 */
export const ingestFiles = (files: ReadonlyArray<IncomingFile>): Effect.Effect<ReadonlyArray<Attachment>, MediaRejected, MediaStore> =>
  Effect.gen(function*() {
    const media = yield* MediaStore
    yield* media.checkTotal(files.map((file) => ({ bytes: file.bytes.length })))
    return yield* Effect.forEach(files, media.ingest)
  }).pipe(Effect.withSpan("kern.media.ingestFiles", { attributes: { files: files.length } }))
