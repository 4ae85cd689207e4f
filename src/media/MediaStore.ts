import { FileSystem, Path } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import * as NodeCrypto from "node:crypto"
import { AgentConfig } from "../config/AgentConfig.js"
import type { MediaConfig } from "../config/media.js"
import { Attachment } from "../session/messages.js"
import { atomicWrite } from "../storage/atomicWrite.js"
import { privateModes } from "../storage/privateFiles.js"
import { describe } from "./describe.js"
import { MediaNotFound, MediaRejected, prunedText } from "./MediaRejected.js"
import { sniff } from "./sniff.js"
import { Transcriber } from "./Transcriber.js"
import { sizeText } from "./sizeText.js"

/** A file as a channel received it: the sender's name for it (shown, never a path) and its bytes. */
export interface IncomingFile {
  readonly name: string
  readonly bytes: Uint8Array
}

export interface MediaStoreShape {
  /**
   * Stores a file that came with a message and describes it: its media type sniffed from the bytes, what kern reads
   * out of it (describe.ts). Refused over `media.maxFileBytes`, or empty. The same bytes twice are one stored file.
   */
  readonly ingest: (file: IncomingFile) => Effect.Effect<Attachment, MediaRejected>
  /** Refuses the files of one message over `media.maxTurnBytes` together, naming the total and the cap. */
  readonly checkTotal: (files: ReadonlyArray<{ readonly bytes: number }>) => Effect.Effect<void, MediaRejected>
  /** The bytes of a stored file. */
  readonly read: (id: string) => Effect.Effect<Uint8Array, MediaNotFound>
  readonly limits: MediaConfig
}

/**
 * The agent's media store: files that came with messages, content-addressed under `.kern/media/<sha256>` (private
 * modes) and indexed in kern.db's `media` table. Sessions and the inbox hold Attachment references, never bytes.
 */
export class MediaStore extends Context.Tag("kern/media/MediaStore")<MediaStore, MediaStoreShape>() {}

const Row = Schema.Struct({ sha256: Schema.String, prunedAtMs: Schema.NullOr(Schema.Number) })


/** Display form of a sender's file name: one line, bounded. */
const shownName = (name: string) => {
  const flat = name.replace(/[\u0000-\u001f\u007f]/g, " ").trim()
  const short = flat.length > 200 ? `${flat.slice(0, 200)}…` : flat
  return short.length === 0 ? "file" : short
}

export const make = (options: { readonly dir: string; readonly limits: MediaConfig }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const transcriber = yield* Transcriber
    const fileOf = (sha256: string) => path.join(options.dir, sha256)
    const { limits } = options

    const ingest = (file: IncomingFile) =>
      Effect.gen(function*() {
        const name = shownName(file.name)
        if (file.bytes.length === 0) return yield* new MediaRejected({ reason: "empty", message: `${name} is empty` })
        if (file.bytes.length > limits.maxFileBytes) {
          return yield* new MediaRejected({
            reason: "too-large",
            message: `${name} is ${sizeText(file.bytes.length)}; files over ${sizeText(limits.maxFileBytes)} are not taken (config media.maxFileBytes)`
          })
        }
        const sniffed = yield* Effect.promise(() => sniff(file.bytes))
        const sha256 = NodeCrypto.createHash("sha256").update(file.bytes).digest("hex")
        const id = `med_${sha256.slice(0, 24)}`
        const notStored = (error: { readonly message: string }) =>
          new MediaRejected({ reason: "not-stored", message: `${name} could not be stored: ${error.message}` })
        const onDisk = yield* fs.exists(fileOf(sha256)).pipe(Effect.mapError(notStored))
        if (!onDisk) {
          yield* atomicWrite(fileOf(sha256), file.bytes, undefined, privateModes).pipe(
            Effect.provideService(FileSystem.FileSystem, fs),
            Effect.provideService(Path.Path, path),
            Effect.mapError(notStored)
          )
        }
        const now = yield* Clock.currentTimeMillis
        yield* sql`INSERT INTO media ${
          sql.insert({ mediaId: id, sha256, mediaType: sniffed.mediaType, bytes: file.bytes.length, createdAtMs: now })
        } ON CONFLICT(media_id) DO UPDATE SET pruned_at_ms = NULL, created_at_ms = excluded.created_at_ms
          WHERE media.pruned_at_ms IS NOT NULL`.pipe(Effect.mapError(notStored))
        const described = yield* describe({ name, bytes: file.bytes }, sniffed).pipe(
          Effect.provideService(Transcriber, transcriber)
        )
        return new Attachment({ id, name, mediaType: sniffed.mediaType, kind: sniffed.kind, bytes: file.bytes.length, ...described })
      }).pipe(Effect.withSpan("kern.media.ingest"))

    const checkTotal = (files: ReadonlyArray<{ readonly bytes: number }>) => {
      const total = files.reduce((sum, file) => sum + file.bytes, 0)
      return total <= limits.maxTurnBytes ? Effect.void : Effect.fail(
        new MediaRejected({
          reason: "turn-too-large",
          message: `the files of this message are ${sizeText(total)} together; a message may carry ${sizeText(limits.maxTurnBytes)} (config media.maxTurnBytes)`
        })
      )
    }

    const read = (id: string) =>
      Effect.gen(function*() {
        const missing = (detail: string) => new MediaNotFound({ id, message: `media ${id} ${detail}` })
        const rows = yield* sql`SELECT sha256, pruned_at_ms FROM media WHERE media_id = ${id}`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(Row))),
          Effect.mapError((error) => missing(`could not be looked up: ${error.message}`))
        )
        const row = rows[0]
        if (row === undefined) return yield* missing("is not in the media store")
        if (row.prunedAtMs !== null) {
          return yield* new MediaNotFound({ id, message: `media ${id} was ${prunedText(row.prunedAtMs)}`, prunedAtMs: row.prunedAtMs })
        }
        return yield* fs.readFile(fileOf(row.sha256)).pipe(
          Effect.mapError((error) => missing(`could not be read: ${error.message}`))
        )
      })

    return MediaStore.of({ ingest, checkTotal, read, limits })
  })

/** The media store of the loaded agent folder. */
export const layer: Layer.Layer<
  MediaStore,
  never,
  AgentConfig | SqlClient.SqlClient | FileSystem.FileSystem | Path.Path | Transcriber
> =
  Layer.effect(
    MediaStore,
    Effect.flatMap(AgentConfig, (loaded) => make({ dir: loaded.paths.mediaDir, limits: loaded.config.media }))
  )
