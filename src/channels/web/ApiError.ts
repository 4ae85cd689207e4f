import { HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { ParseResult, Schema } from "effect"
import { ErrorResponse } from "./api.js"

/**
 * The HTTP API's errors, one class per answer status. On the wire every one is README's `{ error, field? }` (no
 * `_tag`): the status says which it is, and the client decodes it back to its class by status.
 */
const fields = {
  error: Schema.String,
  /** The request field (query parameter, body property or path segment) that was wrong. */
  field: Schema.optional(Schema.String)
}

/** 400: bad input; `field` names what was wrong. */
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", fields) {}
/** 401: no credentials, wrong ones, or credentials in the URL. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", fields) {}
/** 403: authenticated, but not allowed this (a browser's write without its own Origin, a ticket for a cookie). */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", fields) {}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", fields) {}
/** 409: the subsystem behind the route is off in this agent's config (recall). */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", fields) {}
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", fields) {}
/** 500: storage or another part of the agent failed; the message says what. */
export class ServerError extends Schema.TaggedError<ServerError>()("ServerError", fields) {}
/** 503: the runtime did not take the message (it is stopping). */
export class Unavailable extends Schema.TaggedError<Unavailable>()("Unavailable", fields) {}
/** 507: kern.db's disk is full; the client may send it again later. */
export class InsufficientStorage extends Schema.TaggedError<InsufficientStorage>()("InsufficientStorage", fields) {}

export type ApiError =
  | BadRequest
  | Unauthorized
  | Forbidden
  | NotFound
  | Conflict
  | PayloadTooLarge
  | ServerError
  | Unavailable
  | InsufficientStorage

/** Each error's status. */
const statuses = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  PayloadTooLarge: 413,
  ServerError: 500,
  Unavailable: 503,
  InsufficientStorage: 507
} as const satisfies Record<ApiError["_tag"], number>

type Props = { readonly error: string; readonly field?: string | undefined }

/** An error class as the API declares it: `{ error, field? }` on the wire, with its status. */
const onWire = <Self extends Props, I>(Class: Schema.Schema<Self, I> & (new(props: Props) => Self), status: number) =>
  Schema.transform(ErrorResponse, Schema.typeSchema(Class), {
    strict: true,
    decode: (body) => new Class(body),
    encode: (error) => error.field === undefined ? { error: error.error } : { error: error.error, field: error.field }
  }).annotations(HttpApiSchema.annotations({ status }))

/** The errors' wire schemas, for the HttpApi's `addError` and middleware failures. */
export const Errors = {
  BadRequest: onWire(BadRequest, statuses.BadRequest),
  Unauthorized: onWire(Unauthorized, statuses.Unauthorized),
  Forbidden: onWire(Forbidden, statuses.Forbidden),
  NotFound: onWire(NotFound, statuses.NotFound),
  Conflict: onWire(Conflict, statuses.Conflict),
  PayloadTooLarge: onWire(PayloadTooLarge, statuses.PayloadTooLarge),
  ServerError: onWire(ServerError, statuses.ServerError),
  Unavailable: onWire(Unavailable, statuses.Unavailable),
  InsufficientStorage: onWire(InsufficientStorage, statuses.InsufficientStorage)
} as const

export const badRequest = (field: string, error: string) => new BadRequest({ error, field })

export const notFound = (error: string) => new NotFound({ error })

/** A failure of storage or another part of the agent, as a 500 saying what. */
export const serverError = (error: { readonly message: string }) => new ServerError({ error: error.message })

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

/**
 * An answer made outside the HttpApi (the request gate, an unknown route, a failure no route caught), in the same
 * `{ error, field? }` shape.
 */
export const errorResponse = (status: number, body: ErrorResponse) =>
  HttpServerResponse.unsafeJson(body.field === undefined ? { error: body.error } : { error: body.error, field: body.field }, { status })

export const apiErrorStatus = (error: ApiError): number => statuses[error._tag]

/** One of the API's errors answered outside a route (the guard's refusal of an unknown route). */
export const apiErrorResponse = (error: ApiError) => errorResponse(apiErrorStatus(error), error)
