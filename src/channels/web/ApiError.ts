import { HttpServerResponse } from "@effect/platform"
import { Data, ParseResult } from "effect"

/** A request the API answers with an error status: bad input (naming the field), not found, refused. */
export class ApiError extends Data.TaggedError("ApiError")<{
  readonly status: number
  readonly error: string
  readonly field?: string | undefined
}> {}

export const badRequest = (field: string, error: string) => new ApiError({ status: 400, error, field })

export const notFound = (error: string) => new ApiError({ status: 404, error })

/** The field a decode failed on (the first key of the first issue's path), for a 400 that names it. */
export const fieldOf = (error: ParseResult.ParseError, fallback: string): string => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  const key = issue?.path[0]
  return key === undefined ? fallback : String(key)
}

/** A decode failure as a 400: which field, and what was wrong with it. */
export const invalid = (fallback: string) => (error: ParseResult.ParseError) => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  const field = fieldOf(error, fallback)
  return badRequest(field, `${field}: ${issue?.message ?? "invalid"}`)
}

export const errorResponse = (error: ApiError) =>
  HttpServerResponse.unsafeJson(error.field === undefined ? { error: error.error } : { error: error.error, field: error.field }, {
    status: error.status,
    // A body refused unread (Content-Length over the cap) is never drained: the connection goes with it.
    ...(error.status === 413 ? { headers: { connection: "close" } } : {})
  })
