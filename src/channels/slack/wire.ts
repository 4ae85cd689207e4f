import { Schema } from "effect"
import { parseJsonWith } from "../../config/json.js"

/** Every Web API answer: `ok`, and Slack's error code when not. */
export const ApiAnswer = Schema.Struct({
  ok: Schema.Boolean,
  error: Schema.optional(Schema.String)
})

export const AuthTest = Schema.Struct({ user_id: Schema.String, team: Schema.optional(Schema.String) })
export const ConnectionsOpen = Schema.Struct({ url: Schema.String })
export const Posted = Schema.Struct({ channel: Schema.String, ts: Schema.String })
export const ConversationsOpen = Schema.Struct({ channel: Schema.Struct({ id: Schema.String }) })

/** A Socket Mode frame: `hello`, `disconnect`, or an envelope to acknowledge by its id. */
export const Hello = Schema.Struct({ type: Schema.Literal("hello") })
export const Disconnect = Schema.Struct({ type: Schema.Literal("disconnect"), reason: Schema.optional(Schema.String) })
export const Envelope = Schema.Struct({
  envelope_id: Schema.String,
  type: Schema.String,
  payload: Schema.optional(Schema.Unknown),
  retry_attempt: Schema.optional(Schema.Number)
})
export const Frame = Schema.Union(Hello, Disconnect, Envelope)
export type Frame = typeof Frame.Type
export const decodeFrame = Schema.decodeUnknown(parseJsonWith(Frame))

/**
 * A file shared in a message, as the event carries it: sometimes whole, sometimes only its id with
 * `file_access: "check_file_info"` (then files.info says the rest).
 */
export const SlackFile = Schema.Struct({
  id: Schema.String,
  name: Schema.optional(Schema.NullOr(Schema.String)),
  title: Schema.optional(Schema.NullOr(Schema.String)),
  mimetype: Schema.optional(Schema.String),
  size: Schema.optional(Schema.Number),
  mode: Schema.optional(Schema.String),
  file_access: Schema.optional(Schema.String),
  url_private_download: Schema.optional(Schema.String)
})
export type SlackFile = typeof SlackFile.Type
export const FilesInfo = Schema.Struct({ file: SlackFile })
/** files.getUploadURLExternal: where to send the bytes, and the id to complete the upload with. */
export const UploadUrl = Schema.Struct({ upload_url: Schema.String, file_id: Schema.String })
export const Completed = Schema.Struct({ files: Schema.Array(Schema.Struct({ id: Schema.String })) })

/** The events kern takes: a message (DMs) and an app mention (channels). */
export const SlackEvent = Schema.Struct({
  files: Schema.optional(Schema.Array(SlackFile)),
  type: Schema.String,
  channel: Schema.optional(Schema.String),
  channel_type: Schema.optional(Schema.String),
  user: Schema.optional(Schema.String),
  bot_id: Schema.optional(Schema.String),
  subtype: Schema.optional(Schema.String),
  text: Schema.optional(Schema.String),
  ts: Schema.optional(Schema.String),
  thread_ts: Schema.optional(Schema.String)
})
export type SlackEvent = typeof SlackEvent.Type

export const EventCallback = Schema.Struct({
  type: Schema.Literal("event_callback"),
  event_id: Schema.String,
  event: SlackEvent
})
export const decodeEventCallback = Schema.decodeUnknown(EventCallback)

export const BlockActions = Schema.Struct({
  type: Schema.Literal("block_actions"),
  user: Schema.Struct({ id: Schema.String }),
  channel: Schema.optional(Schema.Struct({ id: Schema.String })),
  container: Schema.optional(Schema.Struct({ thread_ts: Schema.optional(Schema.String) })),
  actions: Schema.Array(Schema.Struct({ action_id: Schema.String, value: Schema.optional(Schema.String) }))
})
export const decodeBlockActions = Schema.decodeUnknown(BlockActions)

/** The event ids taken lately (the `slack:seen` cursor): a redelivered envelope is acknowledged and skipped. */
export const SeenIds = parseJsonWith(Schema.Array(Schema.String))
