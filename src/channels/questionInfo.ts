import { isoAt } from "../session/envelope.js"
import type { PendingQuestion, QuestionAnswer } from "../tools/Questions.js"
import type { AgentEventInput, PendingQuestionInfo } from "./AgentEvent.js"

/** A waiting question as clients see it (GET /questions, the `question` event, the terminal): flat, times in ISO. */
export const questionInfo = (pending: PendingQuestion): PendingQuestionInfo => ({
  id: pending.id,
  question: pending.question,
  options: pending.options,
  multiSelect: pending.multiSelect,
  allowText: pending.allowText,
  interface: pending.origin.interface,
  channel: pending.origin.channel,
  userId: pending.origin.userId,
  requestedAt: isoAt(pending.requestedAtMs),
  expiresAt: isoAt(pending.expiresAtMs)
})

/** How a question ended, as the `question-resolved` event and POST /questions/:id say it. */
export const questionAnswerInfo = (answer: QuestionAnswer) => ({
  id: answer.id,
  outcome: answer.outcome,
  choices: answer.choices,
  ...(answer.text === undefined ? {} : { text: answer.text }),
  by: answer.by
})

export const questionEvent = (pending: PendingQuestion): AgentEventInput => ({ type: "question", ...questionInfo(pending) })

export const questionResolvedEvent = (answer: QuestionAnswer): AgentEventInput => ({
  type: "question-resolved",
  ...questionAnswerInfo(answer)
})
