import { HttpServerRequest } from "@effect/platform"
import { Effect, Schema, Stream } from "effect"
import { parseJsonWith } from "../../config/json.js"
import { badRequest, invalid, PayloadTooLarge } from "./ApiError.js"

/** Past this many times the cap a body is not even drained: the connection is cut. */
const drainFactor = 8

/**
 * The body as JSON decoded with `schema`, refused with 413 past `limit` bytes, counted while reading (a body without
 * Content-Length included). Bytes past the cap are read and dropped so the client gets its 413 (stopping a request's
 * stream destroys its socket); past `drainFactor` times the cap the connection is cut instead. The JSON is parsed by
 * parseJsonWith, which refuses nesting deeper than 100 levels before any walk: bad JSON, too deep or the wrong shape
 * is a 400 naming the field (`body` for the whole).
 */
export const readBody = <A, I>(request: HttpServerRequest.HttpServerRequest, schema: Schema.Schema<A, I>, limit: number) =>
  Effect.gen(function*() {
    const tooLarge = new PayloadTooLarge({ error: `the body is larger than ${limit} bytes` })
    const { chunks, size } = yield* request.stream.pipe(
      Stream.mapError((error) => badRequest("body", `body: ${error.message}`)),
      Stream.runFoldEffect({ chunks: [] as Array<Uint8Array>, size: 0 }, (acc, chunk) => {
        const size = acc.size + chunk.length
        if (size > limit * drainFactor) return Effect.fail(tooLarge)
        if (size <= limit) acc.chunks.push(chunk)
        return Effect.succeed({ chunks: acc.chunks, size })
      })
    )
    if (size > limit) return yield* tooLarge
    const text = Buffer.concat(chunks).toString("utf8")
    return yield* Schema.decode(parseJsonWith(schema))(text).pipe(Effect.mapError(invalid("body")))
  })
