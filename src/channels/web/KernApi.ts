import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { ParseResult, Schema } from "effect"
import { McpToolRow } from "../../mcp/McpToolRow.js"
import { RecallStats, SearchResult } from "../../recall/schema.js"
import * as Api from "./api.js"
import { Errors } from "./ApiError.js"
import { Authorization, BodyLimit } from "./Authorization.js"

/** The interfaces a client of GET /events may show the questions of (`?questions=`): the web UI's and the terminal's. */
export const questionShowers = ["web", "terminal"] as const

/**
 * The HTTP API as one contract: every route, its parameters, body, answer and errors (with their statuses), and who
 * may call it. The server's handlers (handlers/) and the CLI's client (client.ts) derive from it; the web UI's
 * decoders are tested against its schemas. The wire shapes themselves are in api.ts.
 */

/** An integer query parameter within bounds; anything else is a 400 naming the parameter. */
const IntParam = (min: number, max: number) =>
  Schema.transformOrFail(Schema.String, Schema.Number, {
    strict: true,
    decode: (text, _, ast) => {
      const n = Number(text)
      return text.trim() !== "" && Number.isInteger(n) && n >= min && n <= max
        ? ParseResult.succeed(n)
        : ParseResult.fail(new ParseResult.Type(ast, text, `expected an integer from ${min} to ${max}, got ${JSON.stringify(text)}`))
    },
    encode: (n) => ParseResult.succeed(String(n))
  })

/** Open: it holds no data (the health check, the exchange of a login ticket for a browser session). */
export class OpenGroup extends HttpApiGroup.make("open")
  .add(HttpApiEndpoint.get("health", "/health").addSuccess(Api.HealthResponse))
  .add(
    HttpApiEndpoint.get("login", "/auth")
      .setUrlParams(Schema.Struct({ ticket: Schema.optional(Schema.String) }))
      // 303 to / with the kern_session cookie.
      .addSuccess(HttpApiSchema.Empty(303))
      .addError(Errors.BadRequest)
      .addError(Errors.Unauthorized)
      .addError(Errors.ServerError)
  )
{}

// Every group below carries BodyLimit then Authorization: the later middleware runs first, so a request is
// authenticated (bearer token or browser session) before its declared body length is looked at.

/** The login ticket a browser exchanges at /auth (the token holder only). */
export class AuthGroup extends HttpApiGroup.make("auth")
  .add(HttpApiEndpoint.post("ticket", "/auth/ticket").addSuccess(Api.TicketResponse))
  .middleware(BodyLimit)
  .middleware(Authorization)
{}

export class ConversationGroup extends HttpApiGroup.make("conversation")
  .add(
    HttpApiEndpoint.post("send", "/message")
      .setPayload(Api.MessageRequest)
      .addSuccess(Api.MessageAccepted, { status: 202 })
      .addError(Errors.BadRequest)
      .addError(Errors.PayloadTooLarge)
      .addError(Errors.Unavailable)
      .addError(Errors.InsufficientStorage)
  )
  .add(
    // SSE (`text/event-stream`): the handler answers with the stream itself; its frames are api.ts's AgentEvent.
    HttpApiEndpoint.get("events", "/events")
      // Where to resume: EventSource sends Last-Event-ID itself when it reconnects; a page that reloads passes it in the query.
      .setHeaders(Schema.Struct({ "last-event-id": Schema.optional(Schema.String) }))
      // `questions=web` / `questions=terminal`: this client shows the questions of that interface's turns (the web UI,
      // an attached `kern tui`); while it is connected, those turns are offered ask_user_question.
      .setUrlParams(Schema.Struct({
        lastEventId: Schema.optional(Schema.String),
        questions: Schema.optional(Schema.Literal(...questionShowers))
      }))
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
  )
  .middleware(BodyLimit)
  .middleware(Authorization)
{}

export class StatusGroup extends HttpApiGroup.make("status")
  .add(HttpApiEndpoint.get("status", "/status").addSuccess(Api.StatusResponse).addError(Errors.ServerError))
  .add(HttpApiEndpoint.get("usage", "/usage").addSuccess(Api.UsageResponse).addError(Errors.ServerError))
  .add(
    // `kern status` of a running agent in one request (src/quick/statusAsk.ts): the agent makes the whole output.
    HttpApiEndpoint.post("report", "/status/report")
      .setPayload(Api.StatusReportRequest)
      .addSuccess(Api.StatusReportResponse)
      .addError(Errors.BadRequest)
      .addError(Errors.NotFound)
      .addError(Errors.ServerError)
  )
  .add(
    // What `kern mcp tools` shows, from the agent's own connections: one server's tools (a `first-use` server is
    // started by the ask), or every connected server's without `server`.
    HttpApiEndpoint.get("mcpTools", "/mcp/tools")
      .setUrlParams(Schema.Struct({ server: Schema.optional(Schema.String) }))
      .addSuccess(Schema.Array(McpToolRow))
      .addError(Errors.NotFound)
  )
  .middleware(BodyLimit)
  .middleware(Authorization)
{}

export class SessionsGroup extends HttpApiGroup.make("sessions")
  .add(HttpApiEndpoint.get("list", "/sessions").addSuccess(Api.SessionsResponse).addError(Errors.ServerError))
  .add(HttpApiEndpoint.post("create", "/sessions").addSuccess(Api.NewSessionResponse, { status: 201 }).addError(Errors.ServerError))
  .add(
    HttpApiEndpoint.get("activity", "/sessions/:id/activity")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(Api.ActivityResponse)
      .addError(Errors.BadRequest)
      .addError(Errors.NotFound)
      .addError(Errors.ServerError)
  )
  .add(
    HttpApiEndpoint.get("history", "/history")
      .setUrlParams(Schema.Struct({
        /** A session id (`/sessions`); the current session when absent. */
        session: Schema.optional(Schema.String),
        /** Messages per page, 1–500 (default 50). */
        limit: Schema.optional(IntParam(1, 500)),
        /** The messages with index < before (default: the newest page). */
        before: Schema.optional(IntParam(0, Number.MAX_SAFE_INTEGER))
      }))
      .addSuccess(Api.HistoryResponse)
      .addError(Errors.BadRequest)
      .addError(Errors.NotFound)
      .addError(Errors.ServerError)
  )
  .middleware(BodyLimit)
  .middleware(Authorization)
{}

export class ContextGroup extends HttpApiGroup.make("context")
  .add(HttpApiEndpoint.get("system", "/context/system").addSuccess(Api.SystemPromptResponse).addError(Errors.ServerError))
  .add(HttpApiEndpoint.get("next", "/context/segments").addSuccess(Api.ContextSegmentsResponse).addError(Errors.ServerError))
  .add(
    HttpApiEndpoint.get("segments", "/segments")
      .setUrlParams(Api.SegmentsQuery)
      .addSuccess(Api.SegmentsResponse)
      .addError(Errors.BadRequest)
      .addError(Errors.NotFound)
      .addError(Errors.ServerError)
  )
  .middleware(BodyLimit)
  .middleware(Authorization)
{}

export class RecallGroup extends HttpApiGroup.make("recall")
  .add(
    HttpApiEndpoint.get("stats", "/recall/stats")
      .addSuccess(RecallStats)
      .addError(Errors.Conflict)
      .addError(Errors.NotFound)
      .addError(Errors.ServerError)
  )
  .add(
    HttpApiEndpoint.get("search", "/recall/search")
      .setUrlParams(Schema.Struct({
        /** The words to look for. */
        q: Schema.optional(Schema.String),
        limit: Schema.optional(IntParam(1, 50)),
        /** ISO dates. */
        after: Schema.optional(Schema.String),
        before: Schema.optional(Schema.String)
      }))
      .addSuccess(SearchResult)
      .addError(Errors.BadRequest)
      .addError(Errors.Conflict)
      .addError(Errors.NotFound)
      .addError(Errors.ServerError)
  )
  .middleware(BodyLimit)
  .middleware(Authorization)
{}

export class ApprovalsGroup extends HttpApiGroup.make("approvals")
  .add(HttpApiEndpoint.get("list", "/approvals").addSuccess(Api.ApprovalsResponse))
  .add(
    // The HTTP API's token is the operator's: whoever holds it answers as the operator.
    HttpApiEndpoint.post("decide", "/approvals/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .setPayload(Api.ApprovalDecisionRequest)
      .addSuccess(Api.ApprovalDecisionResponse)
      .addError(Errors.BadRequest)
      .addError(Errors.Forbidden)
      .addError(Errors.NotFound)
      .addError(Errors.PayloadTooLarge)
  )
  .middleware(BodyLimit)
  .middleware(Authorization)
{}

export class QuestionsGroup extends HttpApiGroup.make("questions")
  .add(HttpApiEndpoint.get("list", "/questions").addSuccess(Api.QuestionsResponse))
  .add(
    // The HTTP API's token is the operator's: it answers the questions of local turns (web, terminal, API), not a
    // chat user's (403).
    HttpApiEndpoint.post("answer", "/questions/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .setPayload(Api.QuestionAnswerRequest)
      .addSuccess(Api.QuestionAnswerResponse)
      .addError(Errors.BadRequest)
      .addError(Errors.Forbidden)
      .addError(Errors.NotFound)
      .addError(Errors.PayloadTooLarge)
  )
  .middleware(BodyLimit)
  .middleware(Authorization)
{}

export class NotesGroup extends HttpApiGroup.make("notes")
  .add(HttpApiEndpoint.get("summary", "/notes/summary").addSuccess(Api.NotesSummaryResponse).addError(Errors.ServerError))
  .add(HttpApiEndpoint.post("regenerate", "/notes/summary").addSuccess(Api.NotesSummaryResponse).addError(Errors.ServerError))
  .add(HttpApiEndpoint.get("daily", "/notes").addSuccess(Api.DailyNotesResponse).addError(Errors.ServerError))
  .middleware(BodyLimit)
  .middleware(Authorization)
{}

export class UsersGroup extends HttpApiGroup.make("users")
  .add(HttpApiEndpoint.get("list", "/users").addSuccess(Api.UsersResponse).addError(Errors.ServerError))
  .middleware(BodyLimit)
  .middleware(Authorization)
{}

/** The schedules, as the operator sees and changes them (the web UI's Schedules view; `kern schedule` on kern.db). */
export class SchedulesGroup extends HttpApiGroup.make("schedules")
  .add(HttpApiEndpoint.get("list", "/schedules").addSuccess(Api.SchedulesResponse).addError(Errors.ServerError))
  .add(
    HttpApiEndpoint.post("add", "/schedules")
      .setPayload(Api.ScheduleRequest)
      .addSuccess(Api.ScheduleAdded, { status: 201 })
      .addError(Errors.BadRequest)
      .addError(Errors.ServerError)
  )
  .add(
    HttpApiEndpoint.del("remove", "/schedules/:id")
      .setPath(Schema.Struct({ id: IntParam(0, Number.MAX_SAFE_INTEGER) }))
      .addSuccess(Api.ScheduleRemoved)
      .addError(Errors.BadRequest)
      .addError(Errors.NotFound)
      .addError(Errors.ServerError)
  )
  .middleware(BodyLimit)
  .middleware(Authorization)
{}

/** The files that came with messages or that the agent sent, by media id (an Attachment's `id`), as GET /history names them. */
export class MediaGroup extends HttpApiGroup.make("media")
  .add(
    // The bytes, with the stored type; shown in place only for raster images (mediaAccess.ts). 404 for anything the
    // caller may not see, whether or not it exists.
    HttpApiEndpoint.get("file", "/media/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(HttpApiSchema.Uint8Array())
      .addError(Errors.NotFound)
      .addError(Errors.ServerError)
  )
  .middleware(BodyLimit)
  .middleware(Authorization)
{}

/** Stopping a running turn as the operator: one by its id (404 when it is not running), or every running turn. */
export class TurnsGroup extends HttpApiGroup.make("turns")
  .add(
    HttpApiEndpoint.post("stop", "/turns/:turnId/stop")
      .setPath(Schema.Struct({ turnId: Schema.String }))
      .addSuccess(Api.StopResponse)
      .addError(Errors.NotFound)
  )
  .add(HttpApiEndpoint.post("stopAll", "/stop").addSuccess(Api.StopResponse))
  .middleware(BodyLimit)
  .middleware(Authorization)
{}

export class KernApi extends HttpApi.make("kern")
  .add(OpenGroup)
  .add(AuthGroup)
  .add(ConversationGroup)
  .add(StatusGroup)
  .add(SessionsGroup)
  .add(ContextGroup)
  .add(RecallGroup)
  .add(ApprovalsGroup)
  .add(QuestionsGroup)
  .add(NotesGroup)
  .add(UsersGroup)
  .add(TurnsGroup)
  .add(SchedulesGroup)
  .add(MediaGroup)
  // A query or path parameter that does not decode is answered as every bad input is: 400 naming it.
  .addError(Errors.BadRequest)
{}
