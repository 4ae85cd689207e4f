import type { HttpClient } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer, Option, PubSub, Queue, Ref } from "effect"
import { AgentRuntime } from "../../runtime/AgentRuntime.js"
import { Approvals } from "../../runtime/Approvals.js"
import { Inbox, type InboxShape } from "../../runtime/Inbox.js"
import { AgentConfig } from "../../config/AgentConfig.js"
import { PairingStore } from "../../users/PairingStore.js"
import { ChannelError, Channels, makeStatusCell, type OutgoingFile } from "../../tools/Channels.js"
import * as Api from "./api.js"
import { makeApprovalPrompts } from "./approvalPrompts.js"
import { isQuestionButton, makeQuestionPrompts } from "./questionPrompts.js"
import { Questions } from "../../tools/Questions.js"
import { sendChunk, sendMarkdown, transient } from "./deliver.js"
import { classify } from "./inbound.js"
import { escapeHtml } from "./markdown.js"
import { splitHtml } from "./split.js"
import { finishLeftovers } from "../leftoverReplies.js"
import * as ReplyPlaceholders from "../ReplyPlaceholders.js"
import { SessionStore } from "../../session/SessionStore.js"
import { TurnStops } from "../../turn/TurnStops.js"
import { chatStop, isStopCommand } from "../chatStop.js"
import { chatUsage, isUsageCommand } from "../chatUsage.js"
import { SpendGuard } from "../../model/SpendGuard.js"
import { finishPlaceholder, makeReplies, telegramInterface } from "./replies.js"
import { MediaStore } from "../../media/MediaStore.js"
import { fetchFiles } from "./files.js"
import { sendFile } from "./sendFile.js"

/** A message whose files failed to download this many times in a row is answered with the reason and passed. */
export const maxFileAttempts = 5

/** Where the channel's position in the update stream is kept, moved with each message in one transaction. */
export const offsetKey = "telegram:offset"
export { defaultApiRoot } from "./api.js"

/**
 * The offset kern.db keeps (none before the first update): the truth, read again whenever polling (re)starts, by
 * the channel and by a host polling for the agent while it is passive.
 */
export const storedOffset = (inbox: InboxShape) =>
  Effect.map(
    inbox.cursor(offsetKey),
    Option.flatMap((value) => Option.liftPredicate(Number(value), Number.isSafeInteger))
  )

/** Waits after the n-th failure in a row: 1 s, 2 s, 4 s … up to a minute. */
export const backoff = (failures: number): Duration.Duration => Duration.seconds(Math.min(60, 2 ** Math.max(0, failures - 1)))

const pairingText = (code: string) =>
  `Hello! I don't know you yet. To talk to me, ask my operator to run <code>kern pair ${escapeHtml(code)}</code> ` +
  `(the code works for 24 hours).`

const channelError = (error: Api.TelegramError) =>
  new ChannelError({
    interface: telegramInterface,
    reason: error.reason === "unauthorized" ? "unauthorized" : transient(error) || error.reason === "conflict" ? "network" : "rejected",
    message: error.message
  })

/**
 * The Telegram channel, when `TELEGRAM_BOT_TOKEN` is set: long-polls the Bot API, puts each paired user's message
 * in the durable inbox (the offset moves in the same transaction, so a kill at any point loses no message and
 * queues none twice), answers strangers with a pairing code, streams each Telegram turn's reply back to its chat
 * and posts that turn's approvals with buttons. A failure (network, 409, 429, 5xx) is logged and retried with
 * backoff; a refused token (401) stops the channel with its reason in `kern status`. Nothing it does stops the agent.
 */
export const layer: Layer.Layer<
  never,
  never,
  Channels | AgentRuntime | Inbox | PairingStore | Approvals | Questions | AgentConfig | HttpClient.HttpClient | SessionStore | SqlClient.SqlClient | TurnStops | SpendGuard | MediaStore
> = Layer.scopedDiscard(Effect.gen(function*() {
  const { env } = yield* AgentConfig
  const token = env["TELEGRAM_BOT_TOKEN"]?.trim() ?? ""
  if (token === "") return
  const root = env["TELEGRAM_API_ROOT"]?.trim() || Api.defaultApiRoot
  const runtime = yield* AgentRuntime
  const inbox = yield* Inbox
  const pairings = yield* PairingStore
  const approvals = yield* Approvals
  const questions = yield* Questions
  const stops = yield* TurnStops
  const spend = yield* SpendGuard
  const channels = yield* Channels
  const media = yield* MediaStore
  const api = yield* Api.make({ root, token })
  const status = yield* makeStatusCell(telegramInterface)

  // Subscribed now, before the runtime serves a turn: no event or approval is missed.
  const events = yield* PubSub.subscribe(runtime.events)
  const requests = yield* PubSub.subscribe(approvals.requests)
  const resolutions = yield* PubSub.subscribe(approvals.resolved)
  const asked = yield* PubSub.subscribe(questions.requests)
  const ended = yield* PubSub.subscribe(questions.resolved)

  // What the last process left half-done in chats, read before this one runs a turn, finished in the background.
  yield* Effect.forkScoped(yield* finishLeftovers(telegramInterface, finishPlaceholder(api), (error) => error.message))
  const reply = yield* makeReplies(api)
  const prompts = yield* makeApprovalPrompts(api, approvals)
  // A stopped channel (its token refused) has no chat to write to.
  const deliver = (event: Parameters<typeof reply>[0]) =>
    Effect.flatMap(status.get, (current) => current.state === "stopped" ? Effect.void : reply(event))
  yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(events), deliver)))
  yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(requests), prompts.request)))
  yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(resolutions), prompts.resolved)))
  const questionPrompts = yield* makeQuestionPrompts(api, questions)
  yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(asked), questionPrompts.request)))
  yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(ended), questionPrompts.resolved)))
  // Telegram turns may ask their person questions while the channel runs.
  yield* questions.showOn(telegramInterface)

  const offset = yield* Ref.make(Option.none<number>())
  const failures = yield* Ref.make(0)
  /** The update whose files failed to download, and how many times in a row. */
  const fileAttempts = yield* Ref.make({ updateId: -1, attempts: 0 })

  /** Past an update that was taken and not queued. */
  const skip = (update: { readonly update_id: number }) => inbox.setCursor({ key: offsetKey, value: String(update.update_id + 1) })

  /** A refusal (the user blocked the bot, a deleted chat) is final: logged, and the update is past. */
  const refusedIsDone = (what: string) => <A, R>(self: Effect.Effect<A, Api.TelegramError, R>) =>
    self.pipe(
      Effect.asVoid,
      Effect.catchIf(
        (error) => !transient(error) && error.reason !== "unauthorized",
        (error) => Effect.logWarning(`kern: telegram: could not ${what}: ${error.message}`)
      )
    )

  /**
   * A message's files, in the media store; undefined when they were refused (the sender is told why). A failure
   * that may pass (network, 5xx, a cut download) fails, so the offset stays before the update and the poll comes
   * back to it after a backoff; after `maxFileAttempts` such failures in a row the sender is told and it is passed.
   */
  const takeFiles = (update: Api.Update, chatId: string, files: Parameters<typeof fetchFiles>[2]) =>
    fetchFiles(api, media, files).pipe(
      Effect.tap(() => Ref.set(fileAttempts, { updateId: -1, attempts: 0 })),
      Effect.catchAll((error) =>
        Effect.gen(function*() {
          if (error._tag === "FilesRefused") {
            yield* sendChunk(api, chatId, escapeHtml(error.text)).pipe(refusedIsDone("say why a file was refused"))
            return undefined
          }
          const { attempts } = yield* Ref.updateAndGet(fileAttempts, (last) =>
            last.updateId === update.update_id ? { updateId: update.update_id, attempts: last.attempts + 1 } : { updateId: update.update_id, attempts: 1 })
          if (attempts < maxFileAttempts || error.reason === "unauthorized") return yield* error
          yield* Effect.logWarning(`kern: telegram: gave up on the files of update ${update.update_id}: ${error.message}`)
          const names = files.map((file) => file.name).join(", ")
          yield* sendChunk(api, chatId, escapeHtml(`I could not download ${names} from Telegram (${error.message}); please send it again`))
            .pipe(refusedIsDone("say a file could not be downloaded"))
          return undefined
        })
      )
    )

  const handle = (bot: Api.User, update: Api.Update) =>
    Effect.gen(function*() {
      const inbound = classify(update, bot, media.limits.maxFileBytes)
      const cursor = { key: offsetKey, value: String(update.update_id + 1) }
      switch (inbound._tag) {
        case "Ignored":
          return yield* skip(update)
        case "Button":
          yield* (isQuestionButton(inbound.query.data) ? questionPrompts.pressed : prompts.pressed)(inbound.query).pipe(
            refusedIsDone("answer a button")
          )
          return yield* skip(update)
        case "Text": {
          if (yield* pairings.isApproved(telegramInterface, inbound.userId)) {
            if (inbound.files.length > 0) {
              const taken = yield* takeFiles(update, inbound.chatId, inbound.files)
              if (taken === undefined) return yield* skip(update)
              return yield* runtime.submit(
                { interface: telegramInterface, channel: inbound.chatId, userId: inbound.userId, text: inbound.text, attachments: taken },
                cursor
              )
            }
            // `/stop` and `/usage` are commands to kern, not a message: answered here, never queued nor sent to the model.
            if (isStopCommand(inbound.text)) {
              const answer = yield* chatStop(stops, pairings, telegramInterface, inbound.chatId, inbound.userId)
              yield* sendChunk(api, inbound.chatId, escapeHtml(answer)).pipe(refusedIsDone("answer /stop"))
              return yield* skip(update)
            }
            if (isUsageCommand(inbound.text)) {
              const answer = yield* chatUsage(spend, pairings, {
                iface: telegramInterface,
                channel: inbound.chatId,
                userId: inbound.userId,
                privateChat: !inbound.group
              })
              // An operator's whole day may outgrow one message: sent in pieces of at most 4096 characters.
              yield* Effect.forEach(splitHtml(escapeHtml(answer)), (chunk) => sendChunk(api, inbound.chatId, chunk)).pipe(
                refusedIsDone("answer /usage")
              )
              return yield* skip(update)
            }
            // The answer to a question its turn asked this person here is not a new message.
            if (yield* questionPrompts.typed(inbound.chatId, inbound.userId, inbound.text)) return yield* skip(update)
            return yield* runtime.submit(
              { interface: telegramInterface, channel: inbound.chatId, userId: inbound.userId, text: inbound.text },
              cursor
            )
          }
          // Strangers in a group are not answered: the group did not ask for the bot's pairing chatter.
          if (!inbound.group) {
            const pairing = yield* pairings.request({
              interface: telegramInterface,
              userId: inbound.userId,
              chatId: inbound.chatId,
              displayName: inbound.displayName
            })
            // A warning: the operator has something to do, and the foreground shows warnings only.
            yield* Effect.logWarning(`kern: telegram: ${inbound.displayName || inbound.userId} asks to pair: kern pair ${pairing.code}`)
            yield* sendChunk(api, inbound.chatId, pairingText(pairing.code)).pipe(refusedIsDone("send a pairing code"))
          }
          return yield* skip(update)
        }
      }
    }).pipe(
      Effect.zipRight(Ref.set(offset, Option.some(update.update_id + 1))),
      Effect.withSpan("kern.telegram.update", { attributes: { updateId: update.update_id } })
    )

  const poll = (bot: Api.User) =>
    Effect.gen(function*() {
      const updates = yield* api.getUpdates(yield* Ref.get(offset))
      yield* status.set("connected")
      yield* Ref.set(failures, 0)
      for (const update of updates) {
        if ("skipped" in update) {
          yield* Effect.logWarning(`kern: telegram: skipped update ${update.update_id}: ${update.skipped}`)
          // Stored too: a host polling for this agent while it is passive starts from the stored offset, and an update
          // left before it would wake the agent again each time it is passivated.
          yield* skip(update)
          yield* Ref.set(offset, Option.some(update.update_id + 1))
        } else {
          yield* handle(bot, update)
        }
      }
    })

  const session = storedOffset(inbox).pipe(
    Effect.flatMap((stored) => Ref.set(offset, stored)),
    Effect.zipRight(api.getMe),
    Effect.tap(() => status.set("connected")),
    Effect.flatMap((bot) => Effect.forever(poll(bot)))
  )

  /**
   * One failure of the session: a refused token stops the channel (false: no more attempts); any other failure waits
   * (backoff, or Telegram's retry_after) and says to go on.
   */
  const recover = (error: Effect.Effect.Error<typeof session>): Effect.Effect<boolean> =>
    Effect.gen(function*() {
      if (error._tag === "TelegramError" && error.reason === "unauthorized") {
        const detail = `Telegram refused the bot token (${error.description}): check TELEGRAM_BOT_TOKEN`
        yield* status.set("stopped", detail)
        yield* Effect.logError(`kern: telegram: stopped: ${detail}`)
        return false
      }
      const count = yield* Ref.updateAndGet(failures, (n) => n + 1)
      const wait = error._tag === "TelegramError" && error.retryAfterSeconds !== undefined
        ? Duration.seconds(error.retryAfterSeconds)
        : backoff(count)
      yield* status.set("reconnecting", error.message)
      yield* Effect.logWarning(`kern: telegram: ${error.message}; retrying in ${Duration.format(wait)}`)
      yield* Effect.sleep(wait)
      return true
    })
  // A loop, not a recursion: an agent that runs for months through many reconnects holds no frame per failure.
  const run = Effect.repeat(Effect.catchAll(session, recover), { while: (again) => again })
  yield* Effect.forkScoped(run)

  const running = Effect.gen(function*() {
    const current = yield* status.get
    if (current.state === "stopped") {
      return yield* new ChannelError({
        interface: telegramInterface,
        reason: "not_connected",
        message: `the Telegram channel is stopped: ${current.detail}`
      })
    }
  })
  const send = (chatId: string, text: string) =>
    running.pipe(
      Effect.zipRight(sendMarkdown(api, chatId, text).pipe(Effect.mapError(channelError))),
      Effect.asVoid,
      Effect.withSpan("kern.telegram.send")
    )
  const sendFileTo = (chatId: string, file: OutgoingFile, caption: string) =>
    running.pipe(Effect.zipRight(sendFile(api, chatId, file, caption).pipe(Effect.mapError(channelError))))

  yield* channels.register({ interface: telegramInterface, status: status.get, send, sendFile: sendFileTo })
})).pipe(Layer.provide(ReplyPlaceholders.layerSql))
