import { Clock, Duration, Effect, Fiber, FiberSet, Option, Queue, Ref, Schedule, type Scope } from "effect"
import { failureTextFor } from "../failureText.js"
import { interruptedText } from "../leftoverReplies.js"
import { type Placeholder, ReplyPlaceholders } from "../ReplyPlaceholders.js"
import type { BotApi } from "./api.js"
import { editChunk, sendChunk } from "./deliver.js"
import { escapeHtml, renderMarkdown } from "./markdown.js"
import { splitHtml } from "./split.js"
import type { TurnEvent } from "../../turn/TurnEvent.js"
import { makeTurnOrigins, type TurnOrigin } from "../../turn/turnOrigins.js"

export const telegramInterface = "telegram"

/** Telegram lets a bot edit a message about once a second; the typing indicator fades after five. */
export const editInterval = Duration.seconds(1)
const typingInterval = Duration.seconds(4)
const placeholder = "…"

/** What a turn's reply shows now: the text the filter let through, the tools running, how it ended. */
interface View {
  readonly text: string
  readonly tools: ReadonlyArray<string>
  /** A tool ran since the last text: the next text starts a new paragraph. */
  readonly afterTool: boolean
  /** A new model step began: its tool calls replace the last step's line. */
  readonly newStep: boolean
  readonly error: string
  readonly finished: boolean
  readonly delivered: boolean
}

const htmlOf = (view: View): string => {
  const parts = [
    view.text.trim() === "" ? "" : renderMarkdown(view.text),
    view.tools.length === 0 ? "" : `<i>⚙ ${escapeHtml(view.tools.join(", "))}…</i>`,
    view.error === "" ? "" : `⚠ ${escapeHtml(view.error)}`
  ].filter((part) => part !== "")
  return parts.join("\n\n")
}

interface Sent {
  readonly id: number
  readonly html: string
}

const logFailure = (what: string) => (error: { readonly message: string }) =>
  Effect.logWarning(`kern: telegram: could not ${what}: ${error.message}`)

/**
 * One turn's reply in its chat: a placeholder at once, then edits at most once a second as the text streams (a tool
 * call shows as a short line the text then replaces), the typing indicator kept alive, and the final text split into
 * as many messages as it needs. A turn that ends without a reply (NO_REPLY) takes back its placeholder.
 */
const streamReply = (
  api: BotApi,
  placeholders: ReplyPlaceholders["Type"],
  turnId: string,
  chatId: string,
  view: Ref.Ref<View>,
  changed: Queue.Dequeue<void>
) =>
  Effect.gen(function*() {
    const typing = yield* Effect.fork(
      api.sendTyping(chatId).pipe(
        Effect.catchAll(logFailure("show that the agent is typing")),
        Effect.repeat(Schedule.spaced(typingInterval))
      )
    )
    let sent: ReadonlyArray<Sent> = yield* sendChunk(api, chatId, placeholder).pipe(
      Effect.map((id) => [{ id, html: "" }]),
      Effect.catchAll((error) => Effect.as(logFailure("send a placeholder")(error), []))
    )
    // Kept in kern.db until the reply replaces it: a process killed before then leaves it for the next start.
    for (const { id } of sent) {
      yield* placeholders.posted({ interface: telegramInterface, turnId, channel: chatId, messageId: String(id) }).pipe(
        Effect.catchAll(logFailure("remember the placeholder"))
      )
    }
    let lastWrite = yield* Clock.currentTimeMillis

    const write = (html: string, final: boolean) =>
      Effect.gen(function*() {
        const chunks = html === "" ? [] : splitHtml(html)
        // `sent` follows every write as it lands, so a failure halfway never sends a chunk twice.
        for (const [index, chunk] of chunks.entries()) {
          const old = sent[index]
          if (old === undefined) {
            const id = yield* sendChunk(api, chatId, chunk)
            sent = [...sent, { id, html: chunk }]
          } else if (old.html !== chunk) {
            yield* editChunk(api, chatId, old.id, chunk)
            sent = sent.map((entry, at) => (at === index ? { id: old.id, html: chunk } : entry))
          }
        }
        // Messages the reply no longer needs (the placeholder of a reply that was not sent, a tool line that spilled over).
        if (final || chunks.length > 0) {
          for (const extra of sent.slice(chunks.length)) {
            yield* api.deleteMessage(chatId, extra.id).pipe(Effect.catchAll(logFailure("delete a message")))
          }
          sent = sent.slice(0, chunks.length)
        }
      }).pipe(Effect.catchAll(logFailure("deliver the reply")))

    while (true) {
      yield* Queue.take(changed)
      const wait = lastWrite + Duration.toMillis(editInterval) - (yield* Clock.currentTimeMillis)
      if (wait > 0) yield* Effect.sleep(Duration.millis(wait))
      const current = yield* Ref.get(view)
      const html = htmlOf(current)
      yield* write(current.finished && !current.delivered && current.text.trim() === "" && current.error === "" ? "" : html, current.finished)
      lastWrite = yield* Clock.currentTimeMillis
      if (current.finished) break
    }
    yield* placeholders.settled(telegramInterface, turnId).pipe(Effect.catchAll(logFailure("settle the placeholder")))
    yield* Fiber.interrupt(typing)
  }).pipe(Effect.withSpan("kern.telegram.reply"))

interface Turn {
  readonly view: Ref.Ref<View>
  readonly changed: Queue.Queue<void>
}

const update = (turn: Turn, f: (view: View) => View) => Effect.zipRight(Ref.update(turn.view, f), Queue.offer(turn.changed, undefined))

/**
 * Delivers every Telegram turn's reply to the chat it came from, as the turn's `incoming` event names it. Events
 * arrive in order on one fiber; each turn's messages are written by a fiber of its own, so one slow chat never holds
 * up another.
 */
export const makeReplies = (
  api: BotApi
): Effect.Effect<(event: TurnEvent) => Effect.Effect<void>, never, Scope.Scope | ReplyPlaceholders> =>
  Effect.gen(function*() {
    const placeholders = yield* ReplyPlaceholders
    const writers = yield* FiberSet.make()
    const origins = yield* makeTurnOrigins
    const turns = new Map<string, Turn>()

    const turnOf = (turnId: string, origin: TurnOrigin) =>
      Effect.gen(function*() {
        const existing = turns.get(turnId)
        if (existing !== undefined) return existing
        const turn: Turn = {
          view: yield* Ref.make<View>({
            text: "",
            tools: [],
            afterTool: false,
            newStep: false,
            error: "",
            finished: false,
            delivered: false
          }),
          changed: yield* Queue.sliding<void>(1)
        }
        turns.set(turnId, turn)
        yield* FiberSet.run(writers, streamReply(api, placeholders, turnId, origin.channel, turn.view, turn.changed))
        return turn
      })

    const addText = (turn: Turn, shown: string) =>
      shown === "" ? Effect.void : update(turn, (v) => ({
        ...v,
        text: v.text + (v.afterTool && v.text.trim() !== "" ? "\n\n" : "") + shown,
        tools: [],
        afterTool: false
      }))

    return (e: TurnEvent) =>
      Effect.gen(function*() {
        const origin = yield* origins.of(e)
        if (Option.isNone(origin) || origin.value.interface !== telegramInterface) return
        const turn = yield* turnOf(e.turnId, origin.value)
        switch (e.type) {
          case "text-delta":
            return yield* addText(turn, e.delta)
          case "tool-call": {
            return yield* update(turn, (v) => ({ ...v, tools: v.newStep ? [e.name] : [...v.tools, e.name], afterTool: true, newStep: false }))
          }
          case "thinking":
            return yield* Ref.update(turn.view, (v) => ({ ...v, newStep: true }))
          case "error":
            return yield* update(turn, (v) => ({ ...v, error: failureTextFor(origin.value, e.message, e.failure) }))
          case "finish": {
            turns.delete(e.turnId)
            return yield* update(turn, (v) => ({
              ...v,
              tools: [],
              finished: true,
              delivered: e.delivered
            }))
          }
          default:
            return
        }
      })
  })

/** A leftover placeholder finished at start (leftoverReplies.ts): the saved reply in its place, or the interruption said. */
export const finishPlaceholder = (api: BotApi) => (placeholder: Placeholder, reply: Option.Option<string>) =>
  Effect.gen(function*() {
    const chatId = placeholder.channel
    const messageId = Number(placeholder.messageId)
    const [first = "", ...rest] = Option.match(reply, {
      onNone: () => [`⚠ ${escapeHtml(interruptedText)}`],
      onSome: (text) => splitHtml(renderMarkdown(text))
    })
    yield* editChunk(api, chatId, messageId, first)
    for (const chunk of rest) yield* sendChunk(api, chatId, chunk)
  })
