import { Effect, Option, Ref } from "effect"
import { channelUser } from "../../kernel/pendingAnswers.js"
import type { PendingQuestion, QuestionAnswer, QuestionsShape } from "../../tools/Questions.js"
import type { BotApi, CallbackQuery, InlineKeyboard } from "./api.js"
import { editChunk, sendChunk } from "./deliver.js"
import { escapeHtml } from "./markdown.js"
import { telegramInterface } from "./replies.js"

/** Button data: `qa:<id>:<n>` answers option n; `qt:<id>:<n>` ticks it (several choices); `qd:<id>` sends the ticks. */
const callbackPattern = /^(qa|qt|qd):(q_[0-9a-f]+)(?::(\d+))?$/

/** Whether a button press is for a question (the rest are approvals'). */
export const isQuestionButton = (data: string | undefined): boolean => callbackPattern.test(data ?? "")

export const questionHtml = (pending: PendingQuestion): string => {
  const seconds = Math.round((pending.expiresAtMs - pending.requestedAtMs) / 1000)
  const how = pending.options.length === 0
    ? "Reply with your answer."
    : pending.multiSelect
    ? `Tick your choices, then Done${pending.allowText ? ", or reply with your own answer" : ""}.`
    : `Pick one${pending.allowText ? ", or reply with your own answer" : ""}.`
  return [`❓ ${escapeHtml(pending.question)}`, `<i>${how} The agent goes on without an answer after ${seconds} s.</i>`].join("\n")
}

export const questionKeyboard = (pending: PendingQuestion, ticked: ReadonlySet<number>): InlineKeyboard =>
  pending.multiSelect
    ? [
      ...pending.options.map((option, n) => [{ text: `${ticked.has(n) ? "☑" : "☐"} ${option}`, callback_data: `qt:${pending.id}:${n}` }]),
      [{ text: "Done", callback_data: `qd:${pending.id}` }]
    ]
    : pending.options.map((option, n) => [{ text: option, callback_data: `qa:${pending.id}:${n}` }])

const outcomeLine = (answer: QuestionAnswer): string =>
  answer.outcome === "answered"
    ? `✅ ${escapeHtml([...answer.choices, ...(answer.text === undefined ? [] : [answer.text])].join(", "))}`
    : answer.outcome === "timeout"
    ? "⌛ <b>No answer</b>: the agent went on without one."
    : "⏹ <b>Stopped</b>: the turn ended."

interface Posted {
  readonly chatId: string
  readonly messageId: number
  readonly html: string
  readonly pending: PendingQuestion
  readonly ticked: ReadonlySet<number>
}

/**
 * Questions asked by Telegram turns: posted to the chat the turn came from, the options as buttons; a press, or a
 * text reply where the question takes words, is an answer only from the person the turn serves (Questions checks: a
 * friend in the group is told it is not theirs). Once it ends, the prompt says how and loses its buttons.
 */
export const makeQuestionPrompts = (api: BotApi, questions: QuestionsShape) =>
  Effect.gen(function*() {
    const posted = yield* Ref.make(new Map<string, Posted>())

    const request = (pending: PendingQuestion) =>
      Effect.gen(function*() {
        if (pending.origin.interface !== telegramInterface) return
        const chatId = pending.origin.channel
        const html = questionHtml(pending)
        const messageId = yield* sendChunk(api, chatId, html, { keyboard: questionKeyboard(pending, new Set()) })
        yield* Ref.update(posted, (all) => new Map(all).set(pending.id, { chatId, messageId, html, pending, ticked: new Set() }))
      }).pipe(
        Effect.catchAll((error) => Effect.logWarning(`kern: telegram: could not ask question ${pending.id}: ${error.message}`)),
        Effect.withSpan("kern.telegram.question.request")
      )

    const resolved = (answer: QuestionAnswer) =>
      Effect.gen(function*() {
        const entry = yield* Ref.modify(posted, (all) => {
          const found = all.get(answer.id)
          const next = new Map(all)
          next.delete(answer.id)
          return [found, next] as const
        })
        if (entry === undefined) return
        yield* editChunk(api, entry.chatId, entry.messageId, `${entry.html}\n\n${outcomeLine(answer)}`, { keyboard: [] })
      }).pipe(Effect.catchAll((error) => Effect.logWarning(`kern: telegram: could not update question ${answer.id}: ${error.message}`)))

    const answerAs = (id: string, userId: string, reply: { readonly choices: ReadonlyArray<number>; readonly text?: string }) =>
      questions.answer(id, reply, channelUser(telegramInterface, userId)).pipe(
        Effect.match({
          onFailure: (error) => ({ text: error.message.slice(0, 200), alert: true }),
          onSuccess: () => ({ text: "Answered", alert: false })
        })
      )

    /** A tick: only the asked person's counts; the prompt shows their ticks so far. */
    const tick = (id: string, userId: string, n: number) =>
      Effect.gen(function*() {
        const entry = (yield* Ref.get(posted)).get(id)
        if (entry === undefined) return { text: `no question ${id} is waiting`, alert: true }
        if (entry.pending.origin.userId !== userId) return { text: "This question was asked of someone else.", alert: true }
        const ticked = new Set(entry.ticked)
        if (ticked.has(n)) ticked.delete(n)
        else ticked.add(n)
        yield* Ref.update(posted, (all) => new Map(all).set(id, { ...entry, ticked }))
        yield* editChunk(api, entry.chatId, entry.messageId, entry.html, { keyboard: questionKeyboard(entry.pending, ticked) })
        return { text: ticked.has(n) ? "Ticked" : "Unticked", alert: false }
      })

    /** A button press: answered as the presser, and told the outcome or why it did not count. */
    const pressed = (query: CallbackQuery) =>
      Effect.gen(function*() {
        const match = callbackPattern.exec(query.data ?? "")
        if (match === null) return yield* api.answerCallbackQuery(query.id, "This button is not kern's.", false)
        const [, kind, id, n] = match
        const userId = String(query.from.id)
        const shown = yield* Ref.get(posted)
        const answer = kind === "qa"
          ? yield* answerAs(id!, userId, { choices: [Number(n)] })
          : kind === "qt"
          ? yield* tick(id!, userId, Number(n))
          : yield* answerAs(id!, userId, { choices: [...(shown.get(id!)?.ticked ?? [])] })
        yield* api.answerCallbackQuery(query.id, answer.text, answer.alert)
      }).pipe(Effect.withSpan("kern.telegram.question.pressed"))

    /**
     * A text message that answers a question: from the person it was asked of, in its chat, while it takes words.
     * True when it did (it is then not a message for the agent).
     */
    const typed = (chatId: string, userId: string, text: string) =>
      Effect.gen(function*() {
        const waiting = [...(yield* Ref.get(posted)).values()].find((entry) =>
          entry.chatId === chatId && entry.pending.origin.userId === userId && entry.pending.allowText
        )
        if (waiting === undefined) return false
        const answered = yield* questions.answer(waiting.pending.id, { choices: [], text }, channelUser(telegramInterface, userId)).pipe(
          Effect.option
        )
        return Option.isSome(answered)
      })

    return { request, resolved, pressed, typed } as const
  })
