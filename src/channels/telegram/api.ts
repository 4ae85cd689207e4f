import { HttpBody, HttpClient, HttpClientRequest } from "@effect/platform"
import { Data, Duration, Effect, Option, type ParseResult, Schema } from "effect"
import { downloadCapped } from "../download.js"
import { jsonValueDepthExceeded, maxJsonDepth, parseJsonWith } from "../../config/json.js"

/** The Bot API objects kern reads: only the fields it uses (others are ignored when decoding). */
export const User = Schema.Struct({
  id: Schema.Number,
  is_bot: Schema.optional(Schema.Boolean),
  first_name: Schema.optional(Schema.String),
  last_name: Schema.optional(Schema.String),
  username: Schema.optional(Schema.String)
})
export type User = typeof User.Type

export const Chat = Schema.Struct({
  id: Schema.Number,
  type: Schema.String,
  title: Schema.optional(Schema.String)
})

export const MessageEntity = Schema.Struct({
  type: Schema.String,
  offset: Schema.Number,
  length: Schema.Number
})

/** The message a message replies to (one level: kern only asks whether it was the bot's). */
const RepliedTo = Schema.Struct({
  message_id: Schema.Number,
  from: Schema.optional(User)
})

/** One size of a photo (Telegram sends several, smallest first). */
export const PhotoSize = Schema.Struct({
  file_id: Schema.String,
  width: Schema.Number,
  height: Schema.Number,
  file_size: Schema.optional(Schema.Number)
})
export type PhotoSize = typeof PhotoSize.Type

/** A document, voice note or audio file: what getFile is asked for, with what Telegram says of it beforehand. */
export const FileObject = Schema.Struct({
  file_id: Schema.String,
  file_name: Schema.optional(Schema.String),
  title: Schema.optional(Schema.String),
  mime_type: Schema.optional(Schema.String),
  file_size: Schema.optional(Schema.Number)
})
export type FileObject = typeof FileObject.Type

export const Message = Schema.Struct({
  message_id: Schema.Number,
  from: Schema.optional(User),
  chat: Chat,
  date: Schema.optional(Schema.Number),
  text: Schema.optional(Schema.String),
  entities: Schema.optional(Schema.Array(MessageEntity)),
  reply_to_message: Schema.optional(RepliedTo),
  /** A file's message has a caption, not a text. */
  caption: Schema.optional(Schema.String),
  photo: Schema.optional(Schema.Array(PhotoSize)),
  document: Schema.optional(FileObject),
  voice: Schema.optional(FileObject),
  audio: Schema.optional(FileObject)
})
export type Message = typeof Message.Type

export const CallbackQuery = Schema.Struct({
  id: Schema.String,
  from: User,
  message: Schema.optional(Schema.Struct({ message_id: Schema.Number, chat: Chat })),
  data: Schema.optional(Schema.String)
})
export type CallbackQuery = typeof CallbackQuery.Type

export const Update = Schema.Struct({
  update_id: Schema.Number,
  message: Schema.optional(Message),
  callback_query: Schema.optional(CallbackQuery)
})
export type Update = typeof Update.Type

/** Every Bot API answer: `ok` with a result, or an error code, a description and sometimes `retry_after`. */
const Envelope = Schema.Struct({
  ok: Schema.Boolean,
  result: Schema.optional(Schema.Unknown),
  error_code: Schema.optional(Schema.Number),
  description: Schema.optional(Schema.String),
  parameters: Schema.optional(Schema.Struct({ retry_after: Schema.optional(Schema.Number) }))
})
const decodeEnvelope = Schema.decode(parseJsonWith(Envelope))
// getUpdates' answer is parsed at any depth (JSON.parse itself does not overflow) and its updates checked one by
// one: an update nested too deep is skipped alone, and the offset moves past it, so it cannot stall the poll.
const decodeUpdatesEnvelope = Schema.decode(parseJsonWith(Envelope, Number.POSITIVE_INFINITY))

/** An update too deep to read: skipped with a warning, its id still moves the offset on. */
export interface SkippedUpdate {
  readonly update_id: number
  readonly skipped: string
}

const decodeUpdate = Schema.decodeUnknown(Update)

/** One update of a getUpdates answer: decoded, or skipped when nested deeper than `maxJsonDepth`. */
const updateOrSkipped = (raw: unknown): Effect.Effect<Update | SkippedUpdate, ParseResult.ParseError> => {
  const deep = jsonValueDepthExceeded(raw)
  if (deep === undefined) return decodeUpdate(raw)
  const id = typeof raw === "object" && raw !== null && "update_id" in raw ? raw.update_id : undefined
  return typeof id === "number"
    ? Effect.succeed({ update_id: id, skipped: `nested more than ${maxJsonDepth} levels deep (at ${deep.slice(0, 3).join(".")}…)` })
    : decodeUpdate(raw)
}

export type TelegramFailure = "unauthorized" | "conflict" | "rate_limited" | "server" | "rejected" | "network"

/** A Bot API call that failed; `message` never contains the bot token. */
export class TelegramError extends Data.TaggedError("TelegramError")<{
  readonly reason: TelegramFailure
  readonly method: string
  readonly message: string
  /** Telegram's own words (`description`), where it gave any. */
  readonly description: string
  /** Seconds to wait, from a 429's `parameters.retry_after`. */
  readonly retryAfterSeconds?: number | undefined
}> {}

/** Telegram refused the HTML (an entity it cannot parse): the text goes again as plain text. */
export const isParseError = (error: TelegramError): boolean =>
  error.reason === "rejected" && /can't parse entities|can't find end of|unsupported start tag|unexpected end tag/i.test(error.description)

/** Editing a message to what it already says: nothing to do. */
export const isNotModified = (error: TelegramError): boolean =>
  error.reason === "rejected" && /message is not modified/i.test(error.description)

const reasonOf = (status: number): TelegramFailure =>
  status === 401 ? "unauthorized" : status === 409 ? "conflict" : status === 429 ? "rate_limited" : status >= 500 ? "server" : "rejected"

export interface BotApiSettings {
  /** `https://api.telegram.org` or a test server's root. */
  readonly root: string
  readonly token: string
}

export type InlineKeyboard = ReadonlyArray<ReadonlyArray<{ readonly text: string; readonly callback_data: string }>>

export interface SendOptions {
  readonly parseMode?: "HTML" | undefined
  readonly keyboard?: InlineKeyboard | undefined
}

/** The Bot API's root unless TELEGRAM_API_ROOT names another (a test server). */
export const defaultApiRoot = "https://api.telegram.org"
/** getFile's answer: where to download the file (valid for an hour), and its size when Telegram knows it. */
export const TelegramFile = Schema.Struct({
  file_id: Schema.String,
  file_size: Schema.optional(Schema.Number),
  file_path: Schema.optional(Schema.String)
})
export type TelegramFile = typeof TelegramFile.Type

/** The largest file the Bot API lets a bot download (getFile), whatever kern's own cap. */
export const botDownloadLimit = 20 * 1024 * 1024

/** A file to upload: sendPhoto or sendDocument. */
export interface Upload {
  readonly name: string
  readonly bytes: Uint8Array
  readonly mediaType: string
  readonly caption?: string | undefined
}

/** The long poll waits this many seconds for an update before answering an empty list. */
export const pollSeconds = 25

/** The Bot API over the ambient HttpClient: JSON POSTs to `<root>/bot<token>/<method>`, answers decoded. */
export const make = (settings: BotApiSettings) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const root = settings.root.replace(/\/+$/, "")
    const hide = (text: string) => text.split(settings.token).join("<token>")

    const exchange = <A, I>(
      method: string,
      body: HttpBody.HttpBody,
      schema: Schema.Schema<A, I>,
      timeout: Duration.Duration,
      decode: typeof decodeEnvelope = decodeEnvelope
    ) =>
      Effect.gen(function*() {
        const request = HttpClientRequest.post(`${root}/bot${settings.token}/${method}`).pipe(HttpClientRequest.setBody(body))
        const network = (detail: string) =>
          new TelegramError({ reason: "network", method, description: "", message: `Telegram ${method}: ${hide(detail)}` })
        const { status, text } = yield* http.execute(request).pipe(
          Effect.flatMap((response) => Effect.map(response.text, (text) => ({ status: response.status, text }))),
          Effect.scoped,
          Effect.mapError((error) => network(`could not reach ${root}: ${error.message}`)),
          Effect.timeoutFail({ duration: timeout, onTimeout: () => network(`no answer from ${root} in ${Duration.format(timeout)}`) })
        )
        // A proxy's error page is not JSON: its status still says what kind of failure it is.
        const envelope = yield* decode(text).pipe(
          Effect.mapError(() => {
            const description = `HTTP ${status}: ${hide(text.slice(0, 120))}`
            return status >= 200 && status < 300
              ? network(`${root} answered something that is not the Bot API: ${description}`)
              : new TelegramError({ reason: reasonOf(status), method, description, message: `Telegram ${method}: ${description}` })
          })
        )
        if (!envelope.ok) {
          const code = envelope.error_code ?? status
          const description = hide(envelope.description ?? `error ${code}`)
          return yield* new TelegramError({
            reason: reasonOf(code),
            method,
            description,
            message: `Telegram ${method}: ${description}`,
            retryAfterSeconds: envelope.parameters?.retry_after
          })
        }
        return yield* Schema.decodeUnknown(schema)(envelope.result).pipe(
          Effect.mapError((error) => network(`unexpected ${method} result: ${error.message}`))
        )
      }).pipe(Effect.withSpan(`kern.telegram.${method}`))

    const call = <A, I>(
      method: string,
      params: Record<string, unknown>,
      schema: Schema.Schema<A, I>,
      timeout: Duration.Duration,
      decode: typeof decodeEnvelope = decodeEnvelope
    ) => exchange(method, HttpBody.unsafeJson(params), schema, timeout, decode)

    const upload = (method: "sendPhoto" | "sendDocument", chatId: string, file: Upload) => {
      const form = new FormData()
      form.append("chat_id", chatId)
      if (file.caption !== undefined && file.caption !== "") form.append("caption", file.caption)
      form.append(method === "sendPhoto" ? "photo" : "document", new Blob([file.bytes], { type: file.mediaType }), file.name)
      // Encoded here, by Node's own fetch: the undici client kern sends with takes no FormData of Node's globals.
      return Effect.promise(async () => {
        const encoded = new Response(form)
        return { type: encoded.headers.get("content-type") ?? "multipart/form-data", body: new Uint8Array(await encoded.arrayBuffer()) }
      }).pipe(Effect.flatMap(({ body, type }) => exchange(method, HttpBody.uint8Array(body, type), Message, Duration.minutes(2))))
    }

    const short = Duration.seconds(30)
    const optional = <K extends string, V>(key: K, value: V | undefined) => value === undefined ? {} : { [key]: value }

    return {
      getMe: call("getMe", {}, User, short),
      getUpdates: (offset: Option.Option<number>) =>
        call("getUpdates", {
          ...Option.match(offset, { onNone: () => ({}), onSome: (value) => ({ offset: value }) }),
          timeout: pollSeconds,
          allowed_updates: ["message", "callback_query"]
        }, Schema.Array(Schema.Unknown), Duration.seconds(pollSeconds + 15), decodeUpdatesEnvelope).pipe(
          Effect.flatMap((raw) => Effect.forEach(raw, updateOrSkipped)),
          Effect.mapError((error) =>
            error._tag === "TelegramError"
              ? error
              : new TelegramError({
                reason: "network",
                method: "getUpdates",
                description: "",
                message: `Telegram getUpdates: unexpected getUpdates result: ${error.message}`
              })
          )
        ),
      sendMessage: (chatId: string, text: string, options: SendOptions = {}) =>
        call("sendMessage", {
          chat_id: chatId,
          text,
          ...optional("parse_mode", options.parseMode),
          ...optional("reply_markup", options.keyboard === undefined ? undefined : { inline_keyboard: options.keyboard })
        }, Message, short),
      editMessageText: (chatId: string, messageId: number, text: string, options: SendOptions = {}) =>
        call("editMessageText", {
          chat_id: chatId,
          message_id: messageId,
          text,
          ...optional("parse_mode", options.parseMode),
          ...optional("reply_markup", options.keyboard === undefined ? undefined : { inline_keyboard: options.keyboard })
        }, Schema.Unknown, short),
      deleteMessage: (chatId: string, messageId: number) =>
        call("deleteMessage", { chat_id: chatId, message_id: messageId }, Schema.Unknown, short),
      sendTyping: (chatId: string) => call("sendChatAction", { chat_id: chatId, action: "typing" }, Schema.Unknown, short),
      answerCallbackQuery: (id: string, text: string, alert: boolean) =>
        call("answerCallbackQuery", { callback_query_id: id, text, show_alert: alert }, Schema.Unknown, short),
      getFile: (fileId: string) => call("getFile", { file_id: fileId }, TelegramFile, short),
      /** Downloads `<root>/file/bot<token>/<file_path>`: at most `maxBytes`, else a `rejected` error naming the cap. */
      download: (filePath: string, maxBytes: number) =>
        downloadCapped(http, HttpClientRequest.get(`${root}/file/bot${settings.token}/${filePath}`), maxBytes).pipe(
          Effect.mapError((failure) =>
            new TelegramError({
              // Too large is final; anything else (a 404 for a path gone stale, a 5xx, a cut body) is tried again.
              reason: failure.reason === "too-large" ? "rejected" : "network",
              method: "download",
              description: hide(failure.message),
              message: `Telegram file download: ${hide(failure.message)}`
            })
          ),
          Effect.timeoutFail({
            duration: Duration.minutes(2),
            onTimeout: () => new TelegramError({ reason: "network", method: "download", description: "", message: "Telegram file download: no end in 2m" })
          }),
          Effect.withSpan("kern.telegram.download")
        ),
      /** sendPhoto (a raster image) or sendDocument (anything else), as multipart/form-data. */
      sendFile: (chatId: string, method: "sendPhoto" | "sendDocument", file: Upload) =>
        upload(method, chatId, file)
    } as const
  })

export type BotApi = Effect.Effect.Success<ReturnType<typeof make>>
