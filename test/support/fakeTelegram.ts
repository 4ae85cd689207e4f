import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Clock, Duration, Effect, Either, Option, Ref, Stream, SubscriptionRef } from "effect"
import { createServer } from "node:http"
import { parseTelegramHtml } from "./fakeTelegramHtml.js"

/**
 * A fake Telegram Bot API on 127.0.0.1: `POST /bot<token>/<method>` with JSON bodies, answered with the Bot API's
 * envelope (`{ok, result}` or `{ok: false, error_code, description, parameters}`) and the matching HTTP status.
 * `getUpdates` long-polls as Telegram does: it answers at once when updates are waiting, else holds until one is
 * scripted or its `timeout` passes (on the Clock); an `offset` confirms (forgets) every update below it; a second
 * poll ends the first with 409. HTML is parsed as Telegram does (unsupported tags, bad entities and unclosed tags
 * are "can't parse entities"), texts over 4096 parsed characters are refused, and editing a message to what it
 * already says is "message is not modified". Every request is recorded with the Clock's time.
 */

export interface RecordedCall {
  readonly method: string
  readonly body: Readonly<Record<string, unknown>>
  readonly atMs: number
}

export interface ScriptedFailure {
  readonly status: number
  readonly description: string
  readonly retryAfter?: number
}

export interface BotMessage {
  readonly messageId: number
  readonly chatId: string
  readonly text: string
  readonly parseMode: string | undefined
  readonly replyMarkup: unknown
  readonly deleted: boolean
}

export interface FakeUser {
  readonly id: number
  readonly first_name?: string
  readonly username?: string
}

/** A file a bot uploaded (sendPhoto / sendDocument), as Telegram received it. */
export interface Uploaded {
  readonly method: string
  readonly chatId: string
  readonly name: string
  readonly mediaType: string
  readonly bytes: Uint8Array
  readonly caption: string | undefined
}

/** How the next file downloads fail: a 404, a 5xx, an HTML error page (status 200), a body cut short. */
export type DownloadFailure = "404" | "500" | "html" | "truncated"

interface Scripted {
  readonly method: string
  readonly failure: ScriptedFailure
}

interface State {
  readonly updates: ReadonlyArray<{ readonly update_id: number } & Record<string, unknown>>
  readonly nextUpdateId: number
  readonly nextMessageId: number
  readonly polls: number
  readonly messages: ReadonlyArray<BotMessage>
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

export const Failures = {
  conflict: { status: 409, description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running" },
  unauthorized: { status: 401, description: "Unauthorized" },
  rateLimited: (seconds: number): ScriptedFailure => ({ status: 429, description: `Too Many Requests: retry after ${seconds}`, retryAfter: seconds }),
  server: { status: 502, description: "Bad Gateway" },
  cantParse: { status: 400, description: "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0" }
} as const

export const make = (options: { readonly token?: string; readonly botId?: number; readonly botUsername?: string } = {}) =>
  Effect.gen(function*() {
    const token = options.token ?? "123456:TEST-token_abcdef"
    const bot = { id: options.botId ?? 777000, is_bot: true, first_name: "Kern", username: options.botUsername ?? "kern_test_bot" }
    const state = yield* SubscriptionRef.make<State>({ updates: [], nextUpdateId: 1000, nextMessageId: 1, polls: 0, messages: [] })
    const recorded = yield* SubscriptionRef.make<ReadonlyArray<RecordedCall>>([])
    const failures = yield* Ref.make<ReadonlyArray<Scripted>>([])
    /** getUpdates polls being held now (a client that goes away ends its own), and polls that arrived while one was. */
    const pending = yield* Ref.make(0)
    const overlaps = yield* Ref.make<ReadonlyArray<RecordedCall>>([])
    const files = new Map<string, { readonly bytes: Uint8Array; readonly path: string; readonly size: number }>()
    const downloadFailures: Array<DownloadFailure> = []
    const uploads = yield* SubscriptionRef.make<ReadonlyArray<Uploaded>>([])
    let nextFile = 0

    const ok = (result: unknown) => HttpServerResponse.unsafeJson({ ok: true, result })
    const error = (failure: ScriptedFailure) =>
      HttpServerResponse.unsafeJson({
        ok: false,
        error_code: failure.status,
        description: failure.description,
        ...(failure.retryAfter === undefined ? {} : { parameters: { retry_after: failure.retryAfter } })
      }, { status: failure.status })
    const bad = (description: string) => error({ status: 400, description })

    const takeFailure = (method: string) =>
      Ref.modify(failures, (all): [Option.Option<ScriptedFailure>, ReadonlyArray<Scripted>] => {
        const at = all.findIndex((f) => f.method === method)
        return at === -1 ? [Option.none(), all] : [Option.some(all[at]!.failure), [...all.slice(0, at), ...all.slice(at + 1)]]
      })

    /** The text as Telegram would store it, or the 400 it would answer. */
    const checkText = (body: Record<string, unknown>): Either.Either<string, string> => {
      const text = typeof body["text"] === "string" ? body["text"] : ""
      let parsed = text
      if (body["parse_mode"] === "HTML") {
        const result = parseTelegramHtml(text)
        if (!result.ok) return Either.left(result.description)
        parsed = result.text
      }
      if (parsed.trim() === "") return Either.left("Bad Request: message text is empty")
      if (parsed.length > 4096) return Either.left("Bad Request: message is too long")
      return Either.right(text)
    }

    const getUpdates = (body: Record<string, unknown>, atMs: number) =>
      Effect.gen(function*() {
        // A poll while another is held: two pollers of one bot (Telegram ends the older with 409).
        if ((yield* Ref.getAndUpdate(pending, (n) => n + 1)) > 0) yield* Ref.update(overlaps, (all) => [...all, { method: "getUpdates", body, atMs }])
        const offset = typeof body["offset"] === "number" ? body["offset"] : undefined
        const timeout = typeof body["timeout"] === "number" ? body["timeout"] : 0
        const poll = yield* SubscriptionRef.modify(state, (s): [number, State] => {
          const updates = offset === undefined ? s.updates : s.updates.filter((u) => u.update_id >= offset)
          return [s.polls + 1, { ...s, updates, polls: s.polls + 1 }]
        })
        const ready = state.changes.pipe(
          Stream.filter((s) => s.updates.length > 0 || s.polls !== poll),
          Stream.take(1),
          Stream.runHead,
          Effect.map(Option.getOrThrow)
        )
        // Interruptible: the handler runs uninterruptibly here, and the timeout could not end a wait it inherited that
        // from, so an empty long poll was never answered (a client's own timeout ended it).
        const seen = yield* Effect.interruptible(ready).pipe(
          Effect.timeout(Duration.seconds(timeout)),
          Effect.option
        )
        if (Option.isSome(seen) && seen.value.polls !== poll) return error(Failures.conflict)
        return ok(Option.match(seen, { onNone: () => [], onSome: (s) => s.updates.slice(0, 100) }))
      }).pipe(Effect.ensuring(Ref.update(pending, (n) => n - 1)))

    const send = (body: Record<string, unknown>) =>
      Effect.gen(function*() {
        const checked = checkText(body)
        if (Either.isLeft(checked)) return bad(checked.left)
        const chatId = String(body["chat_id"])
        const message = yield* SubscriptionRef.modify(state, (s): [BotMessage, State] => {
          const created: BotMessage = {
            messageId: s.nextMessageId,
            chatId,
            text: checked.right,
            parseMode: typeof body["parse_mode"] === "string" ? body["parse_mode"] : undefined,
            replyMarkup: body["reply_markup"],
            deleted: false
          }
          return [created, { ...s, nextMessageId: s.nextMessageId + 1, messages: [...s.messages, created] }]
        })
        const date = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        return ok({ message_id: message.messageId, from: bot, chat: { id: Number(chatId), type: "private" }, date, text: message.text })
      })

    const edit = (body: Record<string, unknown>) =>
      Effect.gen(function*() {
        const checked = checkText(body)
        if (Either.isLeft(checked)) return bad(checked.left)
        const chatId = String(body["chat_id"])
        const found = (yield* SubscriptionRef.get(state)).messages.find((m) =>
          m.chatId === chatId && m.messageId === body["message_id"] && !m.deleted
        )
        if (found === undefined) return bad("Bad Request: message to edit not found")
        const parseMode = typeof body["parse_mode"] === "string" ? body["parse_mode"] : undefined
        const markup = body["reply_markup"]
        if (found.text === checked.right && found.parseMode === parseMode && JSON.stringify(found.replyMarkup) === JSON.stringify(markup)) {
          return bad("Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
        }
        yield* SubscriptionRef.update(state, (s) => ({
          ...s,
          messages: s.messages.map((m) => m === found ? { ...m, text: checked.right, parseMode, replyMarkup: markup } : m)
        }))
        return ok(true)
      })

    const remove = (body: Record<string, unknown>) =>
      Effect.gen(function*() {
        const chatId = String(body["chat_id"])
        const found = (yield* SubscriptionRef.get(state)).messages.find((m) => m.chatId === chatId && m.messageId === body["message_id"] && !m.deleted)
        if (found === undefined) return bad("Bad Request: message to delete not found")
        yield* SubscriptionRef.update(state, (s) => ({ ...s, messages: s.messages.map((m) => m === found ? { ...m, deleted: true } : m) }))
        return ok(true)
      })

    /** getFile: where the file is; Telegram refuses files over 20 MB to bots. */
    const getFile = (body: Record<string, unknown>) => {
      const id = typeof body["file_id"] === "string" ? body["file_id"] : ""
      const file = files.get(id)
      if (file === undefined) return bad("Bad Request: invalid file_id")
      if (file.size > 20 * 1024 * 1024) return bad("Bad Request: file is too big")
      return ok({ file_id: id, file_unique_id: `u${id}`, file_size: file.size, file_path: file.path })
    }

    /** `GET /file/bot<token>/<file_path>`: the bytes, or the scripted failure. */
    const download = (pathname: string) => {
      const match = /^\/file\/bot([^/]+)\/(.+)$/.exec(pathname)
      if (match === null || match[1] !== token) return HttpServerResponse.text("Not Found", { status: 404 })
      const file = [...files.values()].find((f) => f.path === match[2])
      const failure = downloadFailures.shift()
      if (file === undefined || failure === "404") return HttpServerResponse.text("Not Found", { status: 404 })
      if (failure === "500") return HttpServerResponse.text("Internal Server Error", { status: 500 })
      if (failure === "html") return HttpServerResponse.html("<html><body><h1>502 Bad Gateway</h1></body></html>")
      const bytes = failure === "truncated" ? file.bytes.subarray(0, Math.floor(file.bytes.length / 2)) : file.bytes
      return HttpServerResponse.uint8Array(bytes, { contentType: "application/octet-stream" })
    }

    /** sendPhoto / sendDocument as multipart/form-data: the file part recorded with its name and bytes. */
    const upload = (method: string, form: FormData) =>
      Effect.gen(function*() {
        const part = form.get(method === "sendPhoto" ? "photo" : "document")
        const chatId = form.get("chat_id")
        if (typeof chatId !== "string") return bad("Bad Request: chat_id is empty")
        if (part === null || typeof part === "string") return bad(`Bad Request: there is no ${method === "sendPhoto" ? "photo" : "document"} in the request`)
        const bytes = new Uint8Array(yield* Effect.promise(() => part.arrayBuffer()))
        if (method === "sendPhoto" && bytes.length > 10 * 1024 * 1024) return bad("Bad Request: PHOTO_INVALID_DIMENSIONS")
        const caption = form.get("caption")
        yield* SubscriptionRef.update(uploads, (all) => [...all, {
          method,
          chatId,
          name: part.name,
          mediaType: part.type,
          bytes,
          caption: typeof caption === "string" ? caption : undefined
        }])
        const messageId = yield* SubscriptionRef.modify(state, (s): [number, State] => [s.nextMessageId, { ...s, nextMessageId: s.nextMessageId + 1 }])
        return ok({ message_id: messageId, from: bot, chat: { id: Number(chatId), type: "private" }, date: 0 })
      })

    const app = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const pathname = new URL(request.url, "http://fake").pathname
      if (request.method === "GET" && pathname.startsWith("/file/")) {
        const atMs = yield* Clock.currentTimeMillis
        yield* SubscriptionRef.update(recorded, (all) => [...all, { method: "download", body: { path: pathname.replace(token, "<token>") }, atMs }])
        return download(pathname)
      }
      const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(pathname)
      const contentType = request.headers["content-type"] ?? ""
      if (contentType.startsWith("multipart/form-data")) {
        const raw = yield* request.arrayBuffer
        const form = yield* Effect.promise(() => new Response(raw, { headers: { "content-type": contentType } }).formData())
        const method = match?.[2] ?? ""
        const atMs = yield* Clock.currentTimeMillis
        yield* SubscriptionRef.update(recorded, (all) => [...all, { method, body: { chat_id: form.get("chat_id") }, atMs }])
        if (match === null) return error({ status: 404, description: "Not Found" })
        if (match[1] !== token) return error(Failures.unauthorized)
        const scripted = yield* takeFailure(method)
        if (Option.isSome(scripted)) return error(scripted.value)
        return method === "sendPhoto" || method === "sendDocument" ? yield* upload(method, form) : bad("Bad Request: unexpected multipart")
      }
      const text = yield* request.text
      const parsed = Either.getOrUndefined(Either.try(() => JSON.parse(text === "" ? "{}" : text) as unknown))
      const body = isRecord(parsed) ? parsed : {}
      const method = match?.[2] ?? ""
      const atMs = yield* Clock.currentTimeMillis
      yield* SubscriptionRef.update(recorded, (all) => [...all, { method, body, atMs }])
      if (match === null) return error({ status: 404, description: "Not Found" })
      if (match[1] !== token) return error(Failures.unauthorized)
      const scripted = yield* takeFailure(method)
      if (Option.isSome(scripted)) return error(scripted.value)
      switch (method) {
        case "getMe":
          return ok(bot)
        case "getFile":
          return getFile(body)
        case "getUpdates":
          return yield* getUpdates(body, atMs)
        case "sendMessage":
          return yield* send(body)
        case "editMessageText":
          return yield* edit(body)
        case "deleteMessage":
          return yield* remove(body)
        case "sendChatAction":
        case "answerCallbackQuery":
          return ok(true)
        default:
          return error({ status: 404, description: "Not Found" })
      }
    })

    const server = yield* NodeHttpServer.make(() => createServer(), { port: 0, host: "127.0.0.1" })
    yield* server.serve(app)
    const address = server.address
    const port = address._tag === "TcpAddress" ? address.port : 0

    const push = (update: Record<string, unknown>) =>
      SubscriptionRef.modify(state, (s): [number, State] => [
        s.nextUpdateId,
        { ...s, nextUpdateId: s.nextUpdateId + 1, updates: [...s.updates, { update_id: s.nextUpdateId, ...update }] }
      ])

    const calls = (method?: string) =>
      Effect.map(SubscriptionRef.get(recorded), (all) => method === undefined ? all : all.filter((c) => c.method === method))

    return {
      root: `http://127.0.0.1:${port}`,
      token,
      bot,
      /** A user's text message; `chatType` group makes a group chat (id `chatId`), `replyTo` a reply to a bot message. */
      message: (input: {
        readonly from: FakeUser
        readonly text: string
        readonly chatId?: number
        readonly chatType?: "private" | "group" | "supergroup"
        readonly replyTo?: number
      }) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const chatId = input.chatId ?? input.from.id
          const mentions = [...input.text.matchAll(/@[A-Za-z0-9_]+/g)].map((m) => ({ type: "mention", offset: m.index, length: m[0].length }))
          return push({
            message: {
              message_id: 10_000 + Math.floor(now / 1000) % 1000,
              from: { is_bot: false, ...input.from },
              chat: { id: chatId, type: input.chatType ?? "private" },
              date: Math.floor(now / 1000),
              text: input.text,
              ...(mentions.length === 0 ? {} : { entities: mentions }),
              ...(input.replyTo === undefined ? {} : { reply_to_message: { message_id: input.replyTo, from: bot, chat: { id: chatId, type: "private" } } })
            }
          })
        }),
      /** A file Telegram holds, for a message to carry; returns its file_id. `size` overrides what getFile says. */
      addFile: (bytes: Uint8Array, options: { readonly size?: number } = {}) =>
        Effect.sync(() => {
          const id = `F${++nextFile}`
          files.set(id, { bytes, path: `documents/file_${nextFile}`, size: options.size ?? bytes.length })
          return id
        }),
      /** A user's message with files (`photo` sizes, `document`, `voice`, `audio`), in Telegram's shape; returns its update id. */
      fileMessage: (input: { readonly from: FakeUser; readonly caption?: string; readonly chatId?: number } & Record<string, unknown>) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const { caption, chatId, from, ...media } = input
          return push({
            message: {
              message_id: 20_000 + nextFile,
              from: { is_bot: false, ...from },
              chat: { id: chatId ?? from.id, type: "private" },
              date: Math.floor(now / 1000),
              ...(caption === undefined ? {} : { caption }),
              ...media
            }
          })
        }),
      /** The next downloads fail, one failure each. */
      failDownloads: (...kinds: ReadonlyArray<DownloadFailure>) => Effect.sync(() => void downloadFailures.push(...kinds)),
      /** Files the bot uploaded, oldest first. */
      uploads: SubscriptionRef.get(uploads),
      awaitUploads: (count: number) =>
        uploads.changes.pipe(Stream.filter((all) => all.length >= count), Stream.runHead, Effect.map(Option.getOrElse((): ReadonlyArray<Uploaded> => []))),
      /** Any update, as Telegram would send it (fields kern does not know, odd shapes); returns its id. */
      update: (update: Record<string, unknown>) => push(update),
      /** A press on an inline button of the bot's message. */
      press: (input: { readonly from: FakeUser; readonly message: BotMessage; readonly data: string; readonly id?: string }) =>
        push({
          callback_query: {
            id: input.id ?? `cb-${input.message.messageId}-${input.from.id}`,
            from: { is_bot: false, ...input.from },
            message: { message_id: input.message.messageId, chat: { id: Number(input.message.chatId), type: "private" } },
            chat_instance: "1",
            data: input.data
          }
        }),
      /** The next `times` calls of `method` answer `failure`. */
      fail: (method: string, failure: ScriptedFailure, times = 1) =>
        Ref.update(failures, (all) => [...all, ...Array.from({ length: times }, () => ({ method, failure }))]),
      calls,
      /** getUpdates polls that arrived while another poll of the bot was held (each one's 409 for the older), oldest first. */
      overlappingPolls: Ref.get(overlaps),
      /** Waits (without timers) until `count` calls of `method` have arrived. */
      awaitCalls: (method: string, count: number) =>
        recorded.changes.pipe(
          Stream.map((all) => all.filter((c) => c.method === method)),
          Stream.filter((matching) => matching.length >= count),
          Stream.runHead,
          Effect.map(Option.getOrElse((): ReadonlyArray<RecordedCall> => []))
        ),
      /** Waits until the bot's messages in a chat satisfy `done`. */
      awaitChat: (chatId: string | number, done: (messages: ReadonlyArray<BotMessage>) => boolean) =>
        state.changes.pipe(
          Stream.map((s) => s.messages.filter((m) => m.chatId === String(chatId) && !m.deleted)),
          Stream.filter(done),
          Stream.runHead,
          Effect.map(Option.getOrElse((): ReadonlyArray<BotMessage> => []))
        ),
      /** The bot's messages in a chat as they read now (edits applied, deleted ones left out). */
      chat: (chatId: string | number) =>
        Effect.map(SubscriptionRef.get(state), (s) => s.messages.filter((m) => m.chatId === String(chatId) && !m.deleted)),
      /** Updates not yet confirmed by an offset. */
      unconfirmed: Effect.map(SubscriptionRef.get(state), (s) => s.updates.map((u) => u.update_id))
    } as const
  })

export type FakeTelegram = Effect.Effect.Success<ReturnType<typeof make>>
