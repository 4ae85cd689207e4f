import { Effect, Schema } from "effect"
import { maxAskTimeoutSeconds } from "../config/askTimeout.js"
import { RunContext } from "../kernel/RunContext.js"
import { toolFailure } from "../kernel/ToolFailure.js"
import { type QuestionAnswer, Questions } from "./Questions.js"
import type { ToolMetadata } from "./toolMetadata.js"

export const askUserQuestionToolId = "ask_user_question"

const Option = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))

export const AskUserQuestionArgs = Schema.Struct({
  question: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2000)).annotations({
    description: "the question, short and self-contained"
  }),
  options: Schema.optional(Schema.Array(Option).pipe(Schema.maxItems(10))).annotations({
    description: "the choices (up to 10); leave out to ask for a free-text answer"
  }),
  multiSelect: Schema.optional(Schema.Boolean).annotations({ description: "true: the person may pick several options" }),
  allowText: Schema.optional(Schema.Boolean).annotations({
    description: "true: the person may answer in their own words instead of (or besides) the options"
  })
})
export type AskUserQuestionArgs = typeof AskUserQuestionArgs.Type

export const askUserQuestionTool: ToolMetadata = {
  toolId: askUserQuestionToolId,
  name: "Ask the user",
  description: "Ask the person you are serving a question and wait for their answer, e.g. " +
    "{ question: \"Which branch should I deploy?\", options: [\"main\", \"staging\"] }. Use it when you cannot go on " +
    "well without their decision; not for things you can find out yourself. Their channel shows the options as " +
    "buttons or a numbered list. If nobody answers in time the result says so: go on with your best judgement.",
  safetyClass: "READ_ONLY",
  idempotent: false,
  timeoutMs: 60_000,
  scope: "read"
}

/** The kernel's timeout for one call: the longest askTimeout and some room; Questions ends the wait itself. */
export const askKernelTimeoutMs = (): number => (maxAskTimeoutSeconds + 30) * 1000

/** What the model reads back. */
export const answerText = (answer: QuestionAnswer, timeoutSeconds: number): string => {
  if (answer.outcome === "answered") {
    const parts = [
      ...(answer.choices.length === 0 ? [] : [`chose ${answer.choices.map((c) => JSON.stringify(c)).join(", ")}`]),
      ...(answer.text === undefined ? [] : [`wrote ${JSON.stringify(answer.text)}`])
    ]
    return `answer from ${answer.by}: ${parts.join("; ")}`
  }
  if (answer.by === "no surface") return "no answer: nothing here can show a question to this person; go on without it"
  return answer.outcome === "timeout"
    ? `no answer: nobody answered within ${timeoutSeconds} s; go on with your best judgement`
    : "no answer: the turn was stopped while the question waited"
}

/** Asks the turn's person through Questions, and waits. */
export const askUserQuestion = (args: AskUserQuestionArgs) =>
  Effect.gen(function*() {
    const ctx = yield* RunContext
    const questions = yield* Questions
    const options = args.options ?? []
    if (args.multiSelect === true && options.length === 0) {
      return yield* Effect.fail(toolFailure("VALIDATION_ERROR", "multiSelect needs options to pick from"))
    }
    if (ctx.origin === undefined) {
      return yield* Effect.fail(toolFailure("PERMISSION_DENIED", "ask_user_question works only in a turn: there is nobody to ask here"))
    }
    const answer = yield* questions.ask({
      question: args.question,
      options,
      multiSelect: args.multiSelect ?? false,
      allowText: args.allowText ?? false,
      origin: ctx.origin,
      runId: ctx.runId,
      sessionId: ctx.sessionId
    })
    return answerText(answer, questions.timeoutSeconds)
  })
