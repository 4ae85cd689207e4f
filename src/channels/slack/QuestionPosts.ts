import { Effect, Option, PubSub, Queue, Ref, Schema, type Scope } from "effect"
import { channelUser } from "../../kernel/pendingAnswers.js"
import type { PendingQuestion, QuestionAnswer, QuestionsShape } from "../../tools/Questions.js"
import { escapeSlack } from "./mrkdwn.js"
import { slackInterface } from "./Replies.js"
import type { SlackApi, SlackApiError } from "./SlackApi.js"
import { decodeTarget, postFields, type Target } from "./target.js"
import { Posted } from "./wire.js"

/** Button action ids: pick an option (value `<id>:<n>`), tick one (several choices), send the ticks (value `<id>`). */
export const pickAction = "kern_question_pick"
export const tickAction = "kern_question_tick"
export const doneAction = "kern_question_done"
export const questionActions: ReadonlySet<string> = new Set([pickAction, tickAction, doneAction])

const button = (text: string, actionId: string, value: string) =>
  ({ type: "button", action_id: actionId, value, text: { type: "plain_text", text: text.slice(0, 75) } })

const howText = (pending: PendingQuestion): string =>
  pending.options.length === 0
    ? "Reply with your answer."
    : pending.multiSelect
    ? `Tick your choices, then Done${pending.allowText ? ", or reply with your own answer" : ""}.`
    : `Pick one${pending.allowText ? ", or reply with your own answer" : ""}.`

const heading = (pending: PendingQuestion) => ({
  type: "section",
  text: { type: "mrkdwn", text: `:question: *${escapeSlack(pending.question)}*\n_${howText(pending)}_` }
})

/** The question as posted: its text and, when it has options, a button per option (ticks and Done for several). */
export const questionMessage = (pending: PendingQuestion, ticked: ReadonlySet<number>) => ({
  text: `Question: ${pending.question}`,
  blocks: [
    heading(pending),
    ...(pending.options.length === 0 ? [] : [{
      type: "actions",
      block_id: `kern_question_${pending.id}`,
      elements: pending.multiSelect
        ? [
          ...pending.options.map((option, n) => button(`${ticked.has(n) ? "☑" : "☐"} ${option}`, tickAction, `${pending.id}:${n}`)),
          button("Done", doneAction, pending.id)
        ]
        : pending.options.map((option, n) => button(option, pickAction, `${pending.id}:${n}`))
    }])
  ]
})

const outcomeLine = (answer: QuestionAnswer): string =>
  answer.outcome === "answered"
    ? `:white_check_mark: ${escapeSlack([...answer.choices, ...(answer.text === undefined ? [] : [answer.text])].join(", "))}`
    : answer.outcome === "timeout"
    ? ":hourglass: No answer: the agent went on without one."
    : ":black_square_for_stop: The turn was stopped."

interface Shown {
  readonly pending: PendingQuestion
  readonly target: Target
  readonly ts: string
  readonly ticked: ReadonlySet<number>
}

const logFailure = (what: string) => (error: SlackApiError) => Effect.logWarning(`kern: Slack: could not ${what}: ${error.message}`)

/**
 * Shows Slack turns' questions where the turn came from (the DM, or the mention's thread) with a button per option,
 * takes the presses and the typed answers of the person asked (anyone else is told, privately, that it is not
 * theirs), and once the question ends replaces the buttons with how. Subscribes when called.
 */
export const start = (api: SlackApi, questions: QuestionsShape) =>
  Effect.gen(function*() {
    const requests = yield* PubSub.subscribe(questions.requests)
    const resolved = yield* PubSub.subscribe(questions.resolved)
    const shown = yield* Ref.make(new Map<string, Shown>())

    const show = (pending: PendingQuestion) =>
      Effect.gen(function*() {
        if (pending.origin.interface !== slackInterface) return
        const target = decodeTarget(pending.origin.channel)
        const posted = yield* api.call("chat.postMessage", { ...postFields(target), ...questionMessage(pending, new Set()) }, Posted)
        yield* Ref.update(shown, (all) => new Map(all).set(pending.id, { pending, target, ts: posted.ts, ticked: new Set() }))
      }).pipe(Effect.catchAll(logFailure("ask a question")))

    const settle = (answer: QuestionAnswer) =>
      Effect.gen(function*() {
        const entry = yield* Ref.modify(shown, (all) => {
          const found = all.get(answer.id)
          const next = new Map(all)
          next.delete(answer.id)
          return [found, next] as const
        })
        if (entry === undefined) return
        yield* api.call("chat.update", {
          channel: entry.target.channel,
          ts: entry.ts,
          text: `Question: ${entry.pending.question} (${answer.outcome})`,
          blocks: [heading(entry.pending), { type: "context", elements: [{ type: "mrkdwn", text: outcomeLine(answer) }] }]
        }, Posted)
      }).pipe(Effect.catchAll(logFailure("update a question")))

    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(requests), show)))
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(resolved), settle)))

    const tell = (channel: string | undefined, userId: string, threadTs: string | undefined, text: string) =>
      channel === undefined
        ? Effect.logWarning(`kern: Slack: ${text}`)
        : api.call("chat.postEphemeral", { channel, user: userId, text, ...(threadTs === undefined ? {} : { thread_ts: threadTs }) }, Schema.Unknown)
          .pipe(Effect.asVoid, Effect.catchAll(logFailure("answer a button")))

    /** A press on a question's button, by `userId`, where it was pressed. */
    const pressed = (action: { readonly action_id: string; readonly value: string }, userId: string, channel: string | undefined, threadTs: string | undefined) =>
      Effect.gen(function*() {
        const [id = "", n] = action.value.split(":")
        const by = channelUser(slackInterface, userId)
        const entry = (yield* Ref.get(shown)).get(id)
        if (action.action_id === tickAction) {
          if (entry === undefined) return yield* tell(channel, userId, threadTs, `no question ${id} is waiting`)
          if (entry.pending.origin.userId !== userId) {
            return yield* tell(channel, userId, threadTs, `this question was asked of slack:${entry.pending.origin.userId}`)
          }
          const ticked = new Set(entry.ticked)
          if (ticked.has(Number(n))) ticked.delete(Number(n))
          else ticked.add(Number(n))
          yield* Ref.update(shown, (all) => new Map(all).set(id, { ...entry, ticked }))
          return yield* api.call("chat.update", { channel: entry.target.channel, ts: entry.ts, ...questionMessage(entry.pending, ticked) }, Posted)
            .pipe(Effect.asVoid, Effect.catchAll(logFailure("tick an option")))
        }
        const choices = action.action_id === pickAction ? [Number(n)] : [...(entry?.ticked ?? [])]
        yield* questions.answer(id, { choices }, by).pipe(
          Effect.asVoid,
          Effect.catchTag("QuestionError", (error) => tell(channel, userId, threadTs, error.message))
        )
      })

    /** A message that answers a question: from the person asked, where it was asked, while it takes words. */
    const typed = (channel: string, userId: string, text: string) =>
      Effect.gen(function*() {
        const waiting = [...(yield* Ref.get(shown)).values()].find((entry) =>
          entry.pending.origin.channel === channel && entry.pending.origin.userId === userId && entry.pending.allowText
        )
        if (waiting === undefined) return false
        const answered = yield* questions.answer(waiting.pending.id, { choices: [], text }, channelUser(slackInterface, userId)).pipe(
          Effect.option
        )
        return Option.isSome(answered)
      })

    return { pressed, typed } as const
  }) satisfies Effect.Effect<unknown, never, Scope.Scope>

export type QuestionPosts = Effect.Effect.Success<ReturnType<typeof start>>
