import { Clock, Context, Duration, Effect, Layer, Option, PubSub, Ref, Schema, type Scope } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import { type Answerer, makePendingAnswers } from "../kernel/pendingAnswers.js"
import { randomHex } from "../kernel/RunContext.js"
import { pairedInterfaces } from "./Channels.js"

export const QuestionOrigin = Schema.Struct({ interface: Schema.String, channel: Schema.String, userId: Schema.String })
export type QuestionOrigin = typeof QuestionOrigin.Type

/** A question a turn asks the person it serves (ask_user_question), waiting for their answer. */
export class PendingQuestion extends Schema.Class<PendingQuestion>("PendingQuestion")({
  /** `q_<8 hex>`: what buttons carry and `POST /questions/:id` takes. */
  id: Schema.String,
  question: Schema.String,
  /** The choices, in order; none: the answer is the person's own words. */
  options: Schema.Array(Schema.String),
  multiSelect: Schema.Boolean,
  /** Whether the person may answer in their own words (always, without options). */
  allowText: Schema.Boolean,
  /** The turn's channel and person: the only one who may answer. */
  origin: QuestionOrigin,
  runId: Schema.String,
  sessionId: Schema.String,
  requestedAtMs: Schema.Number,
  expiresAtMs: Schema.Number
}) {}

/** How a question ended: answered, nobody answered within `askTimeout`, or its turn ended (stopped) while it waited. */
export class QuestionAnswer extends Schema.Class<QuestionAnswer>("QuestionAnswer")({
  id: Schema.String,
  outcome: Schema.Literal("answered", "timeout", "stopped"),
  /** The options chosen, as their text, in the question's order. */
  choices: Schema.Array(Schema.String),
  /** The person's own words, when they wrote some. */
  text: Schema.optional(Schema.String),
  /** `operator` (terminal, web UI, CLI), `telegram:42`, `slack:U1`; `timeout` or `the end of its turn` unanswered. */
  by: Schema.String,
  atMs: Schema.Number
}) {}

/** An answer as a surface sends it: option numbers (0-based) and/or the person's own words. */
export const QuestionReply = Schema.Struct({
  choices: Schema.optionalWith(Schema.Array(Schema.Int.pipe(Schema.nonNegative())), { default: () => [] }),
  text: Schema.optional(Schema.String)
})
export type QuestionReply = typeof QuestionReply.Type

export class QuestionError extends Schema.TaggedError<QuestionError>()("QuestionError", {
  reason: Schema.Literal("unknown_id", "not_yours", "invalid_answer"),
  message: Schema.String
}) {}

export interface QuestionRequest {
  readonly question: string
  readonly options: ReadonlyArray<string>
  readonly multiSelect: boolean
  readonly allowText: boolean
  readonly origin: QuestionOrigin
  readonly runId: string
  readonly sessionId: string
}

export interface QuestionsShape {
  /**
   * Asks, and waits for the person's answer, `askTimeout`, or the end of the turn. A turn whose interface no surface
   * shows is answered at once with a timeout-like "nobody can see it" (`by: "no surface"`).
   */
  readonly ask: (request: QuestionRequest) => Effect.Effect<QuestionAnswer>
  /** Answers as `by`: only the person the turn serves may (the local operator for the local surfaces' turns). */
  readonly answer: (id: string, reply: QuestionReply, by: Answerer) => Effect.Effect<QuestionAnswer, QuestionError>
  readonly pending: Effect.Effect<ReadonlyArray<PendingQuestion>>
  /** Every new question, for the surfaces that show them (subscribe before a turn can ask). */
  readonly requests: PubSub.PubSub<PendingQuestion>
  /** Every end of a question, so a surface can update what it showed. */
  readonly resolved: PubSub.PubSub<QuestionAnswer>
  /** A surface that shows the questions of `iface`'s turns, for the life of the caller's scope. */
  readonly showOn: (iface: string) => Effect.Effect<void, never, Scope.Scope>
  /** The interfaces some running surface shows questions for: where ask_user_question is offered. */
  readonly surfaces: Effect.Effect<ReadonlySet<string>>
  /** `askTimeout`: how long a question waits. */
  readonly timeoutSeconds: number
}

/** The questions turns ask the people they serve, and the surfaces (terminal, web UI, chat channels) that show them. */
export class Questions extends Context.Tag("kern/tools/Questions")<Questions, QuestionsShape>() {}

/** Who "answered" a question whose turn ended while it waited. */
const turnEnded = "the end of its turn"

/** Whether `by` is the person `origin`'s turn serves: the same chat user, or the operator for a local surface's turn. */
export const isAskedOf = (origin: QuestionOrigin, by: Answerer): boolean =>
  pairedInterfaces.has(origin.interface)
    ? by._tag === "ChannelUser" && by.interface === origin.interface && by.userId === origin.userId
    : by._tag === "LocalOperator"

const answererName = (by: Answerer) => by._tag === "LocalOperator" ? "operator" : `${by.interface}:${by.userId}`

/** The reply's choices as option texts, or why the reply does not answer this question. */
const checkedReply = (pending: PendingQuestion, reply: QuestionReply): Either<ReadonlyArray<string>> => {
  const chosen = [...new Set(reply.choices)].sort((a, b) => a - b)
  const outside = chosen.find((n) => n >= pending.options.length)
  if (outside !== undefined) return { error: `option ${outside + 1} does not exist (the question has ${pending.options.length})` }
  if (!pending.multiSelect && chosen.length > 1) return { error: "this question takes one option, not several" }
  const text = reply.text?.trim() ?? ""
  const mayWrite = pending.allowText || pending.options.length === 0
  if (text !== "" && !mayWrite) return { error: "this question takes one of its options, not text" }
  if (chosen.length === 0 && text === "") return { error: "an answer needs an option or some text" }
  return { ok: chosen.map((n) => pending.options[n]!) }
}
type Either<A> = { readonly ok: A; readonly error?: undefined } | { readonly error: string; readonly ok?: undefined }

export const make = (timeoutSeconds: number) =>
  Effect.gen(function*() {
    const requests = yield* PubSub.unbounded<PendingQuestion>()
    const resolved = yield* PubSub.unbounded<QuestionAnswer>()
    const shown = yield* Ref.make(new Map<string, number>())
    const timeout = Duration.seconds(timeoutSeconds)
    const waits = yield* makePendingAnswers<PendingQuestion, QuestionAnswer>((_, answer) =>
      Effect.asVoid(PubSub.publish(resolved, answer))
    )

    const count = (iface: string, by: number) =>
      Ref.update(shown, (all) => {
        const next = new Map(all)
        const n = (next.get(iface) ?? 0) + by
        if (n <= 0) next.delete(iface)
        else next.set(iface, n)
        return next
      })
    const showOn = (iface: string) => Effect.acquireRelease(count(iface, 1), () => count(iface, -1))
    const surfaces = Effect.map(Ref.get(shown), (all): ReadonlySet<string> => new Set(all.keys()))

    const ask = (request: QuestionRequest): Effect.Effect<QuestionAnswer> =>
      Effect.gen(function*() {
        const id = `q_${yield* randomHex(8)}`
        const now = yield* Clock.currentTimeMillis
        if (!(yield* surfaces).has(request.origin.interface)) {
          yield* Effect.logInfo(`question not asked: nothing shows questions to ${request.origin.interface} turns`)
          return new QuestionAnswer({ id, outcome: "timeout", choices: [], by: "no surface", atMs: now })
        }
        const pending = new PendingQuestion({
          id,
          question: request.question,
          options: request.options,
          multiSelect: request.multiSelect && request.options.length > 0,
          allowText: request.allowText || request.options.length === 0,
          origin: request.origin,
          runId: request.runId,
          sessionId: request.sessionId,
          requestedAtMs: now,
          expiresAtMs: now + Duration.toMillis(timeout)
        })
        const answer = yield* waits.open(id, pending)
        yield* PubSub.publish(requests, pending)
        yield* Effect.logInfo(`question ${id} asked of ${request.origin.interface}:${request.origin.userId}`)
        const ended = yield* waits.wait(id, answer, timeout, (how, _, atMs) =>
          new QuestionAnswer({
            id,
            outcome: how === "timeout" ? "timeout" : "stopped",
            choices: [],
            by: how === "timeout" ? "timeout" : turnEnded,
            atMs
          }))
        yield* Effect.logInfo(`question ${id} ${ended.outcome === "answered" ? `answered by ${ended.by}` : ended.outcome}`).pipe(
          Effect.annotateLogs({ outcome: ended.outcome, waitedMs: ended.atMs - now })
        )
        return ended
      }).pipe(Effect.withSpan("kern.questions.ask"))

    const answer = (id: string, reply: QuestionReply, by: Answerer) =>
      Effect.gen(function*() {
        const found = yield* waits.find(id)
        if (Option.isNone(found)) {
          return yield* new QuestionError({ reason: "unknown_id", message: `no question ${id} is waiting (answered, timed out, or never asked)` })
        }
        const pending = found.value
        if (!isAskedOf(pending.origin, by)) {
          return yield* new QuestionError({
            reason: "not_yours",
            message: `${answererName(by)} cannot answer question ${id}: it was asked of ${pending.origin.interface}:${pending.origin.userId}`
          })
        }
        const checked = checkedReply(pending, reply)
        if (checked.error !== undefined) return yield* new QuestionError({ reason: "invalid_answer", message: checked.error })
        const text = reply.text?.trim() ?? ""
        const settled = yield* waits.settle(id, (_, atMs) =>
          new QuestionAnswer({ id, outcome: "answered", choices: checked.ok, ...(text === "" ? {} : { text }), by: answererName(by), atMs }))
        if (Option.isNone(settled)) {
          return yield* new QuestionError({ reason: "unknown_id", message: `question ${id} was answered or timed out meanwhile` })
        }
        return settled.value
      }).pipe(Effect.withSpan("kern.questions.answer"))

    return Questions.of({ ask, answer, pending: waits.pending, requests, resolved, showOn, surfaces, timeoutSeconds })
  })

/** Questions waiting `seconds` for an answer. */
export const layerWith = (seconds: number): Layer.Layer<Questions> => Layer.effect(Questions, make(seconds))

/** The agent's questions, waiting its config's `askTimeout`. */
export const layer: Layer.Layer<Questions, never, AgentConfig> = Layer.effect(
  Questions,
  Effect.flatMap(AgentConfig, ({ config }) => make(config.askTimeout))
)
