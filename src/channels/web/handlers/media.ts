import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { MediaStore } from "../../../media/MediaStore.js"
import { mediaIdPattern, servedMedia } from "../../../media/servedMedia.js"
import { notFound, serverError } from "../ApiError.js"
import { Principal } from "../guard.js"
import { KernApi } from "../KernApi.js"
import { mayView, mediaHeaders, viewerOf } from "../mediaAccess.js"

/**
 * `GET /media/<id>`: a file that came with a message or that the agent sent, to a caller who may see a conversation it
 * is linked to. Whatever is not a media id, not stored, not linked to what the caller sees, or gone from the disk is
 * the same 404, so an answer never tells a file the caller may not see from one that is not there.
 */
export const layer = HttpApiBuilder.group(KernApi, "media", (handlers) =>
  Effect.gen(function*() {
    const media = yield* MediaStore
    const sql = yield* SqlClient.SqlClient
    return handlers.handle("file", ({ path }) =>
      Effect.gen(function*() {
        const missing = notFound(`no media ${mediaIdPattern.test(path.id) ? path.id : "with that id"}`)
        if (!mediaIdPattern.test(path.id)) return yield* missing
        const viewer = viewerOf(yield* Principal)
        const stored = yield* servedMedia(path.id).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.mapError(serverError))
        if (stored === undefined || !mayView(viewer, stored.conversations)) return yield* missing
        const bytes = yield* media.read(path.id).pipe(Effect.mapError(() => missing))
        return HttpServerResponse.uint8Array(bytes, { contentType: stored.mediaType, headers: mediaHeaders(stored.mediaType) })
      }).pipe(Effect.withSpan("kern.web.media")))
  }))
