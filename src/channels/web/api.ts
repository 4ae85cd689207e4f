import { SpendStatus } from "../../model/spendStatus.js"
import { RunningJobs, RunningSubAgents } from "../../tools/runningWork.js"
import { Schema } from "effect"
import { McpServerState } from "../../mcp/McpServerState.js"
import { SummarizerStatus } from "../../context/summarizerStatus.js"
import { RecallStats, SearchResult } from "../../recall/schema.js"
import { SessionMessage, Usage } from "../../session/messages.js"
import { FileInfo, PendingApprovalInfo, PendingQuestionInfo } from "../AgentEvent.js"

// GET /recall/stats answers RecallStats, GET /recall/search a SearchResult: recall's own schemas.
export { RecallStats, SearchResult }

/**
 * The HTTP API's wire shapes: every route's request and response and every `/events` event, as Schemas. KernApi.ts
 * puts them together into the routes (with their parameters, errors and auth), from which the server and the CLI's
 * client derive; the web UI's decoders are tested against the same ones.
 * Changes here are additive only: clients built against an older version keep working.
 *
 * Auth: `Authorization: Bearer <KERN_AUTH_TOKEN>` on every route but `/health` and `/auth`; a browser logs in with
 * `GET /auth?ticket=…` (from `kern open`) and then carries the `kern_session` cookie. A cookie-authenticated POST
 * must carry an `Origin` header equal to the server's own origin (or one listed in `corsOrigins`).
 */

// ---------------------------------------------------------------------------------------------------------------
// Errors (every non-2xx answer is JSON)

/** 400 (bad input: `field` names what was wrong), 401, 403, 404, 405, 413, 500, 503, 507 (kern.db's disk is full). */
export const ErrorResponse = Schema.Struct({
  error: Schema.String,
  /** The request field (query parameter, body property or path segment) that was wrong. */
  field: Schema.optional(Schema.String)
})
export type ErrorResponse = typeof ErrorResponse.Type

/** 501: the subsystem behind the route is not part of this build yet; the UI says so plainly. */
export const NotBuiltResponse = Schema.Struct({
  error: Schema.Literal("not built"),
  feature: Schema.Literal("context")
})
export type NotBuiltResponse = typeof NotBuiltResponse.Type

// ---------------------------------------------------------------------------------------------------------------
// GET /health (open, no auth)

export const HealthResponse = Schema.Struct({
  ok: Schema.Literal(true),
  name: Schema.String,
  pid: Schema.Number,
  /** ISO time the server started. */
  startedAt: Schema.String
})
export type HealthResponse = typeof HealthResponse.Type

// ---------------------------------------------------------------------------------------------------------------
// POST /auth/ticket (bearer only) and GET /auth?ticket=… (→ 303 to / with the kern_session cookie)

export const TicketResponse = Schema.Struct({
  ticket: Schema.String,
  /** The one-time login URL: `http://host:port/auth?ticket=…`. */
  url: Schema.String,
  /** ISO time after which the ticket is refused (60 s after it was made). */
  expiresAt: Schema.String
})
export type TicketResponse = typeof TicketResponse.Type

export const AuthQuery = Schema.Struct({ ticket: Schema.String })

// ---------------------------------------------------------------------------------------------------------------
// POST /message → 202

/** A file sent with a message: the sender's name for it (shown, never a path) and its bytes in base64. */
export const MessageFile = Schema.Struct({
  name: Schema.String,
  /** The file's bytes, base64 (RFC 4648, with or without padding). Its type is sniffed from the bytes, never the name. */
  data: Schema.String
})
export type MessageFile = typeof MessageFile.Type

export const MessageRequest = Schema.Struct({
  /** What to say; not empty (after trimming) unless files come with it. */
  text: Schema.String,
  /**
   * Files that come with the message (photos, PDFs, voice notes, any file), each at most config `media.maxFileBytes`
   * and together at most `media.maxTurnBytes`; one refused file refuses the message (4xx naming it), nothing queued.
   */
  files: Schema.optional(Schema.Array(MessageFile)),
  /** Who it comes through: "web" by default ("heartbeat" and "subagent" are reserved). */
  interface: Schema.optional(Schema.String),
  /** The conversation it belongs to: "web" by default. */
  channel: Schema.optional(Schema.String)
})
export type MessageRequest = typeof MessageRequest.Type

/**
 * The message is durable (in kern.db's inbox) when this is answered. Its turn's events carry `turnId`. When the
 * message arrives while a turn of the same channel runs, it is injected into that turn instead: its `incoming`
 * event then has `messageId` = this `turnId` and `turnId` = the running turn's; follow that turn from there.
 */
export const MessageAccepted = Schema.Struct({
  turnId: Schema.String,
  /** The files as stored, in the order sent: each one's media id (`GET /media/<id>`), name, sniffed type, size, pages. */
  files: Schema.optional(Schema.Array(FileInfo))
})
export type MessageAccepted = typeof MessageAccepted.Type

// ---------------------------------------------------------------------------------------------------------------
// GET /status (what `kern status --json` shows, plus the running server and runtime)

export const UsageTotals = Schema.Struct({ turns: Schema.Number, ...Usage.fields })

export const HeartbeatStatus = Schema.Struct({
  intervalMinutes: Schema.Number,
  activeHours: Schema.NullOr(Schema.String),
  last: Schema.NullOr(Schema.Struct({
    at: Schema.NullOr(Schema.String),
    atMs: Schema.Number,
    outcome: Schema.String,
    reason: Schema.String
  })),
  next: Schema.NullOr(Schema.String),
  nextAtMs: Schema.NullOr(Schema.Number)
})

export const StatusResponse = Schema.Struct({
  dir: Schema.String,
  name: Schema.String,
  provider: Schema.String,
  model: Schema.NullOr(Schema.String),
  problems: Schema.Array(Schema.String),
  dbBytes: Schema.Number,
  usage: Schema.NullOr(UsageTotals),
  heartbeat: HeartbeatStatus,
  runtime: Schema.Struct({
    pid: Schema.Number,
    command: Schema.String,
    /** ISO time the runtime started. */
    since: Schema.String,
    uptimeMs: Schema.Number,
    host: Schema.String,
    port: Schema.Number,
    sessionId: Schema.String,
    /** Messages in the current session. */
    messages: Schema.Number,
    /** Messages waiting in the queue (not counting the running turn's). */
    queued: Schema.Number,
    /** Messages in the durable inbox (waiting or in a turn that has not recorded them yet). */
    inbox: Schema.Number,
    turns: Schema.Number,
    /** SSE clients connected to /events. */
    listeners: Schema.Number,
    /** Approvals waiting for a person (GET /approvals lists them). */
    approvals: Schema.Number
  }),
  /** The chat channels whose tokens are configured, and where each is. */
  channels: Schema.Array(Schema.Struct({
    interface: Schema.String,
    state: Schema.Literal("connecting", "connected", "reconnecting", "stopped"),
    detail: Schema.String,
    /** ISO time it got to that state. */
    since: Schema.String
  })),
  /** The summary model's state and the current session's lag behind it (optional: older agents do not send it). */
  summarizer: Schema.optional(SummarizerStatus),
  /** Each configured MCP server: connected (tools), starting, failed (reason, stderr tail), disabled (optional: older agents do not send it). */
  mcpServers: Schema.optional(Schema.Array(McpServerState)),
  /** Today's model spend against the `limits` caps (optional: older agents do not send it). */
  spend: Schema.optional(SpendStatus),
  /** The background jobs running now: how many, and each id, command (clipped) and age (optional: older agents do not send it). */
  jobs: Schema.optional(RunningJobs),
  /** The sub-agents running now: how many, and each id, task (clipped), depth and age (optional: older agents do not send it). */
  subagents: Schema.optional(RunningSubAgents),
  /**
   * The caps on the files of POST /message (config `media`): bytes one file may have, and the files of one message
   * together; a client checks them before it uploads (optional: older agents do not send it).
   */
  media: Schema.optional(Schema.Struct({ maxFileBytes: Schema.Number, maxTurnBytes: Schema.Number }))
})
export type StatusResponse = typeof StatusResponse.Type

/**
 * POST /status/report: `kern status` of the agent's folder, made by the agent (src/channels/web/statusReport.ts) as
 * the command line would make it: from the folder as the client named it (`dir`, relative to its `cwd`), its
 * environment (the config's overrides, which keys are set) and whether it wants JSON. Answered only for the agent's
 * own folder.
 */
export const StatusReportRequest = Schema.Struct({
  dir: Schema.String,
  cwd: Schema.String,
  env: Schema.Record({ key: Schema.String, value: Schema.String }),
  json: Schema.Boolean
})
export type StatusReportRequest = typeof StatusReportRequest.Type

/** What `kern status` prints on stdout (without its last newline), and the failure it then ends with, if any. */
export const StatusReportResponse = Schema.Struct({ stdout: Schema.String, failure: Schema.NullOr(Schema.String) })

// ---------------------------------------------------------------------------------------------------------------
// GET /history?session&limit&before

/** GET /recall/search: `q` the words to look for; `limit` 1–50 (default 5); `after`/`before` ISO dates. */
export const RecallSearchQuery = Schema.Struct({
  q: Schema.String,
  limit: Schema.optional(Schema.String),
  after: Schema.optional(Schema.String),
  before: Schema.optional(Schema.String)
})

export const HistoryQuery = Schema.Struct({
  /** A session id (`/sessions`); the current session when absent. */
  session: Schema.optional(Schema.String),
  /** Messages per page, 1–500 (default 50). */
  limit: Schema.optional(Schema.String),
  /** Return the messages with index < before (default: the newest page). */
  before: Schema.optional(Schema.String)
})

export const HistoryItem = Schema.Struct({
  /** The message's position in the session (0 = first message after the header), stable while the file grows. */
  index: Schema.Number,
  message: SessionMessage
})
export type HistoryItem = typeof HistoryItem.Type

export const HistoryResponse = Schema.Struct({
  sessionId: Schema.String,
  /** Oldest first. */
  messages: Schema.Array(HistoryItem),
  /** Messages in the session. */
  total: Schema.Number,
  /** The `before` that fetches the previous page; null at the start of the session. */
  nextBefore: Schema.NullOr(Schema.Number)
})
export type HistoryResponse = typeof HistoryResponse.Type

// ---------------------------------------------------------------------------------------------------------------
// GET /sessions, GET /sessions/:id/activity

export const SessionInfo = Schema.Struct({
  id: Schema.String,
  createdAt: Schema.String,
  messages: Schema.Number,
  bytes: Schema.Number,
  /** ISO time the file last changed. */
  modifiedAt: Schema.String,
  /** The runtime's live session. */
  current: Schema.Boolean,
  /** The conversation the session is of: `main` (the operator's), or a paired user's chat, a group, a thread. */
  conversation: Schema.String,
  /** Whom the conversation is with: the operator, a paired user (`telegram:555`, their name if known), null for a group or thread. */
  person: Schema.NullOr(Schema.Struct({ userId: Schema.String, name: Schema.NullOr(Schema.String) })),
  /** Where: `main`, `telegram DM`, `telegram group -100123`, `slack DM`, `slack thread C0123`. */
  channel: Schema.String
})
export type SessionInfo = typeof SessionInfo.Type

export const SessionsResponse = Schema.Struct({
  currentSessionId: Schema.String,
  /** Oldest first. */
  sessions: Schema.Array(SessionInfo)
})
export type SessionsResponse = typeof SessionsResponse.Type

/** POST /sessions: a new session is started; the next turn writes there (the operator's `/new`). */
export const NewSessionResponse = Schema.Struct({ sessionId: Schema.String })
export type NewSessionResponse = typeof NewSessionResponse.Type

export const ActivityResponse = Schema.Struct({
  sessionId: Schema.String,
  total: Schema.Number,
  roles: Schema.Struct({ user: Schema.Number, assistant: Schema.Number, tool: Schema.Number }),
  /** Messages per local day (the agent's timezone), oldest first, days without messages left out. */
  daily: Schema.Array(Schema.Struct({ date: Schema.String, count: Schema.Number })),
  /** Messages per local hour of day: 24 entries, hour 0–23. */
  hourly: Schema.Array(Schema.Struct({ hour: Schema.Number, count: Schema.Number }))
})
export type ActivityResponse = typeof ActivityResponse.Type

// ---------------------------------------------------------------------------------------------------------------
// GET /context/system

export const SystemSection = Schema.Struct({
  kind: Schema.Literal("preamble", "file", "latest-note", "notes-summary", "skills", "tools", "conversation-summary"),
  /** What it comes from: a file name, `notes/…`, the notes summarized joined with ", ", "tools" or "conversation". */
  source: Schema.String,
  /** The section exactly as the model gets it, with its tags (`<document path="…">`, `<notes_summary>`, …). */
  text: Schema.String,
  chars: Schema.Number,
  /** Tokens of `text` (o200k_base). */
  tokens: Schema.Number
})
export type SystemSection = typeof SystemSection.Type

/**
 * Which request a context figure describes: `next`, a preview of the request the operator's next turn would send
 * (before that turn's own message), planned and built as the turn builds it; `last`, one that was sent.
 */
export const ContextRequest = Schema.Literal("next", "last")
export type ContextRequest = typeof ContextRequest.Type

/**
 * What a `next` request's figures leave out that the next turn's request will hold, in words: its own message (and how
 * many wait in the inbox), auto-recall's passages for it when on, and a paired user's smaller toolset.
 */
export const LeftOut = Schema.Array(Schema.String)

/** GET /context/system: the system prompt of the operator's next request, by section. */
export const SystemPromptResponse = Schema.Struct({
  request: ContextRequest,
  leftOut: LeftOut,
  sections: Schema.Array(SystemSection),
  /** Characters of the whole prompt as the model gets it (sections and their separators). */
  totalChars: Schema.Number,
  /** Tokens of the whole prompt (separators included, so not quite the sum of the sections'). */
  totalTokens: Schema.Number
})
export type SystemPromptResponse = typeof SystemPromptResponse.Type

// ---------------------------------------------------------------------------------------------------------------
// GET /segments, GET /context/segments

/** One node of a session's segment tree: an L0 segment of messages, or a summary rolled up from its children. */
export const SegmentInfo = Schema.Struct({
  id: Schema.Number,
  /** 0 = L0 (summarizes messages); n > 0 summarizes L(n-1) segments. */
  level: Schema.Number,
  /** First message index. */
  start: Schema.Number,
  /** One past the last message index (exclusive). */
  end: Schema.Number,
  /** Tokens of the messages spanned. */
  tokens: Schema.Number,
  /** 0 while unsummarized. */
  summaryTokens: Schema.Number,
  /** Markdown; null while unsummarized. */
  summary: Schema.NullOr(Schema.String),
  firstAt: Schema.String,
  lastAt: Schema.String,
  parentId: Schema.NullOr(Schema.Number),
  /** Its summary is in the <conversation_summary> the model gets now. */
  inContext: Schema.Boolean
})
export type SegmentInfo = typeof SegmentInfo.Type

export const SegmentsQuery = Schema.Struct({
  /** A session id (`/sessions`); the current session when absent. */
  session: Schema.optional(Schema.String)
})

/** GET /segments?session=<id>: a session's whole segment tree (the current session by default). */
export const SegmentsResponse = Schema.Struct({
  sessionId: Schema.String,
  /** Messages in the session. */
  messages: Schema.Number,
  /** First message sent raw; messages before it are summarized. */
  cut: Schema.Number,
  segments: Schema.Array(SegmentInfo)
})
export type SegmentsResponse = typeof SegmentsResponse.Type

/** GET /context/segments: the next request's summaries and token breakdown (`request` says which request). */
export const ContextSegmentsResponse = Schema.Struct({
  request: ContextRequest,
  leftOut: LeftOut,
  sessionId: Schema.String,
  messages: Schema.Number,
  cut: Schema.Number,
  budget: Schema.Struct({
    maxContextTokens: Schema.Number,
    /** Tokens allowed for summaries. */
    summary: Schema.Number,
    /** Tokens allowed for raw messages. */
    raw: Schema.Number
  }),
  tokens: Schema.Struct({
    /** The system prompt without the conversation summary. */
    system: Schema.Number,
    /** Tool definitions. */
    tools: Schema.Number,
    /** The <conversation_summary> block. */
    summary: Schema.Number,
    /** Raw messages after the cut. */
    raw: Schema.Number,
    total: Schema.Number
  }),
  /** What the tool definitions cost, builtin and MCP apart, and what offering MCP tools by name saved (mcpToolBudget). */
  toolsCost: Schema.Struct({
    builtin: Schema.Number,
    mcp: Schema.Number,
    /** MCP tools offered by name only: their definitions are loaded by tool_search. */
    lazyTools: Schema.Number,
    /** What those definitions would have cost. */
    saved: Schema.Number
  }),
  injected: Schema.Array(SegmentInfo)
})
export type ContextSegmentsResponse = typeof ContextSegmentsResponse.Type

// ---------------------------------------------------------------------------------------------------------------
// GET /usage

export const UsageResponse = UsageTotals
export type UsageResponse = typeof UsageResponse.Type

// ---------------------------------------------------------------------------------------------------------------
// GET /notes/summary, POST /notes/summary (regenerates, answers with the new one)

export const NotesSummaryResponse = Schema.Struct({
  /** null before there are two daily notes (nothing to summarize) or before the first summary is made. */
  summary: Schema.NullOr(Schema.Struct({
    text: Schema.String,
    sources: Schema.Array(Schema.String),
    fresh: Schema.Boolean
  }))
})
export type NotesSummaryResponse = typeof NotesSummaryResponse.Type

// GET /notes: the latest daily notes, newest first (the summary covers the ones before the latest, so with one note
// there is no summary, and the note is here)

export const DailyNote = Schema.Struct({
  /** `notes/YYYY-MM-DD.md`, relative to the agent folder. */
  path: Schema.String,
  date: Schema.String,
  text: Schema.String
})
export const DailyNotesResponse = Schema.Struct({
  notes: Schema.Array(DailyNote),
  /** How many daily notes there are in all (`notes` holds the latest few). */
  total: Schema.Number
})
export type DailyNotesResponse = typeof DailyNotesResponse.Type

// GET /users: the approved channel users by name, so a client shows "Ada" rather than `slack · D0000000001`. Never a
// pairing code. A name is the user's own words (their chat profile): a client renders it as text.

export const ChannelUser = Schema.Struct({
  interface: Schema.String,
  userId: Schema.String,
  /** The chat they paired from (their direct chat with the agent: a Slack DM's channel id, a Telegram chat id). */
  chatId: Schema.String,
  /** Their display name on the channel; "" when the channel gave none. */
  name: Schema.String,
  role: Schema.Literal("operator", "user")
})
export const UsersResponse = Schema.Struct({ users: Schema.Array(ChannelUser) })
export type UsersResponse = typeof UsersResponse.Type

/** GET /schedules: each schedule, when it next fires (in its zone), its runs fired and missed. */
export const ScheduleView = Schema.Struct({
  id: Schema.Number,
  kind: Schema.Literal("at", "cron"),
  when: Schema.String,
  timezone: Schema.String,
  prompt: Schema.String,
  misfire: Schema.Literal("skip", "once", "all"),
  deliverTo: Schema.NullOr(Schema.String),
  createdBy: Schema.String,
  next: Schema.NullOr(Schema.String),
  nextDueMs: Schema.NullOr(Schema.Number),
  fired: Schema.Number,
  missed: Schema.Number,
  lastFired: Schema.NullOr(Schema.String),
  lastMissed: Schema.NullOr(Schema.String)
})
/**
 * The heartbeat as GET /schedules shows it beside the schedules (`kern schedule list` lists it as schedule 0): every
 * heartbeatInterval minutes within activeHours, its next tick (null while no agent runs). Not removed like a
 * schedule: heartbeatInterval 0 turns it off, and then it is null.
 */
export const HeartbeatView = Schema.Struct({
  id: Schema.Literal(0),
  kind: Schema.Literal("heartbeat"),
  when: Schema.String,
  timezone: Schema.String,
  prompt: Schema.String,
  next: Schema.NullOr(Schema.String),
  nextDueMs: Schema.NullOr(Schema.Number),
  note: Schema.String
})
export const SchedulesResponse = Schema.Struct({ schedules: Schema.Array(ScheduleView), heartbeat: Schema.NullOr(HeartbeatView) })
export type SchedulesResponse = typeof SchedulesResponse.Type

/** POST /schedules (the operator's): exactly one of `at` and `cron`, as `kern schedule add` takes them. */
export const ScheduleRequest = Schema.Struct({
  prompt: Schema.String,
  at: Schema.optional(Schema.String),
  cron: Schema.optional(Schema.String),
  timezone: Schema.optional(Schema.String),
  deliverTo: Schema.optional(Schema.String),
  misfire: Schema.optional(Schema.Literal("skip", "once", "all")),
  graceMinutes: Schema.optional(Schema.Int)
})
export const ScheduleAdded = Schema.Struct({ schedule: ScheduleView })
export const ScheduleRemoved = Schema.Struct({ removed: Schema.Number })

// ---------------------------------------------------------------------------------------------------------------
// GET /events (SSE): `id: <seq>`, `event: <type>` (a turn's `error` as `turn-error`: sseEventName.ts), `data: <one of these as JSON>`; `Last-Event-ID` resumes.
// Keepalive comments (`: keepalive`) every 15 s. When the replay buffer no longer holds what a client missed, the
// first event it gets is a `reset` (reload state from the routes above). The events are the turn's own
// (src/turn/TurnEvent.ts) and the agent's (src/channels/AgentEvent.ts), with the hub's `seq` and `at`.

export {
  AgentEvent,
  AgentEventInput,
  AgentEventJson,
  type AgentEventType,
  ApprovalEvent,
  ApprovalResolvedEvent,
  EventStamp,
  HeartbeatEvent,
  OutgoingEvent,
  PendingApprovalInfo,
  PendingQuestionInfo,
  QuestionEvent,
  QuestionResolvedEvent,
  ResetEvent
} from "../AgentEvent.js"
export {
  ContextEvent,
  ErrorEvent,
  FinishEvent,
  IncomingEvent,
  RecallEvent,
  TextDeltaEvent,
  ThinkingEvent,
  ToolCallEvent,
  ToolResultEvent
} from "../../turn/TurnEvent.js"

// ---------------------------------------------------------------------------------------------------------------
// GET /approvals, POST /approvals/:id


export const ApprovalsResponse = Schema.Struct({ approvals: Schema.Array(PendingApprovalInfo) })

/** The operator's answer: `approved` true runs the call, false refuses it. */
export const ApprovalDecisionRequest = Schema.Struct({ approved: Schema.Boolean })

export const ApprovalDecisionResponse = Schema.Struct({
  id: Schema.String,
  approved: Schema.Boolean,
  outcome: Schema.Literal("approved", "denied", "timeout"),
  by: Schema.String
})

// ---------------------------------------------------------------------------------------------------------------
// GET /questions, POST /questions/:id

export const QuestionsResponse = Schema.Struct({ questions: Schema.Array(PendingQuestionInfo) })

/** The person's answer: option indices (0-based) and/or their own words (where the question allows text). */
export const QuestionAnswerRequest = Schema.Struct({
  choices: Schema.optional(Schema.Array(Schema.Int.pipe(Schema.nonNegative()))),
  text: Schema.optional(Schema.String.pipe(Schema.maxLength(4000)))
})

export const QuestionAnswerResponse = Schema.Struct({
  id: Schema.String,
  outcome: Schema.Literal("answered", "timeout", "stopped"),
  choices: Schema.Array(Schema.String),
  text: Schema.optional(Schema.String),
  by: Schema.String
})

// ---------------------------------------------------------------------------------------------------------------
// POST /turns/:turnId/stop, POST /stop

/** The turns a stop ended (their ids): empty when nothing was running (POST /stop). */
export const StopResponse = Schema.Struct({ stopped: Schema.Array(Schema.String) })
export type StopResponse = typeof StopResponse.Type
