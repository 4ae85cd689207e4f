import { type HttpClient, type HttpClientRequest } from "@effect/platform"
import { Data, Effect, Stream } from "effect"

/** A file download from a chat service that did not give the file: what went wrong, in words safe to show. */
export class DownloadFailure extends Data.TaggedError("DownloadFailure")<{
  readonly reason: "too-large" | "status" | "network" | "not-the-file"
  readonly status?: number | undefined
  /** The answer's `Retry-After`, when it had one (a 429 or 503). */
  readonly retryAfter?: string | undefined
  readonly message: string
}> {}

export interface Downloaded {
  readonly bytes: Uint8Array
  readonly contentType: string
}

/**
 * GETs a file through `http`, reading at most `maxBytes` of it (the download stops there, never buffered whole); a
 * non-2xx status or a body cut short of its Content-Length fail. The request's URL never appears in a failure: it
 * may carry a token (Telegram's `/file/bot<token>/…`).
 */
export const downloadCapped = (
  http: HttpClient.HttpClient,
  request: HttpClientRequest.HttpClientRequest,
  maxBytes: number
): Effect.Effect<Downloaded, DownloadFailure> =>
  Effect.gen(function*() {
    const network = (error: { readonly message: string }) =>
      new DownloadFailure({ reason: "network", message: `the download failed (${error.message.split(request.url).join("<url>")})` })
    const response = yield* http.execute(request).pipe(Effect.mapError(network))
    const contentType = response.headers["content-type"] ?? ""
    if (response.status < 200 || response.status >= 300) {
      return yield* new DownloadFailure({
        reason: "status",
        status: response.status,
        retryAfter: response.headers["retry-after"],
        message: `the download answered HTTP ${response.status}`
      })
    }
    const declared = Number(response.headers["content-length"] ?? Number.NaN)
    if (Number.isFinite(declared) && declared > maxBytes) {
      return yield* new DownloadFailure({ reason: "too-large", message: `the file is ${declared} bytes, over the ${maxBytes} taken` })
    }
    const read = yield* response.stream.pipe(
      Stream.runFoldWhile(
        { chunks: [] as Array<Uint8Array>, bytes: 0 },
        (acc) => acc.bytes <= maxBytes,
        (acc, chunk) => {
          acc.chunks.push(chunk)
          return { chunks: acc.chunks, bytes: acc.bytes + chunk.byteLength }
        }
      ),
      Effect.mapError(network)
    )
    if (read.bytes > maxBytes) {
      return yield* new DownloadFailure({ reason: "too-large", message: `the file is over the ${maxBytes} bytes taken` })
    }
    if (Number.isFinite(declared) && declared !== read.bytes) {
      return yield* new DownloadFailure({ reason: "network", message: `the download was cut short (${read.bytes} of ${declared} bytes)` })
    }
    return { bytes: new Uint8Array(Buffer.concat(read.chunks)), contentType }
  }).pipe(Effect.scoped)
