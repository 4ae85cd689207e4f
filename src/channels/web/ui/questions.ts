// The questions turns ask the person at this page (ask_user_question), as a value: GET /questions loads them, the
// event stream adds and resolves them. Pure, like approvals.ts.
import type { PendingQuestion, ServerEvent } from "./wire.js"

export interface QuestionsState {
  /** Oldest first: the dialog shows the first. */
  readonly pending: ReadonlyArray<PendingQuestion>
  /** Ids resolved while this page watched: a GET /questions answer sent before must not bring them back. */
  readonly resolved: ReadonlySet<string>
}

export const noQuestions: QuestionsState = { pending: [], resolved: new Set() }

const oldestFirst = (list: ReadonlyArray<PendingQuestion>) =>
  list.slice().sort((a, b) => Date.parse(a.requestedAt) - Date.parse(b.requestedAt))

/** Only the web UI's own turns' questions are this page's to answer (the server refuses the others). */
const isWebTurns = (q: PendingQuestion) => q.interface === "web"

export const addQuestion = (state: QuestionsState, question: PendingQuestion): QuestionsState =>
  !isWebTurns(question) || state.resolved.has(question.id) || state.pending.some((p) => p.id === question.id)
    ? state
    : { ...state, pending: oldestFirst([...state.pending, question]) }

export const resolveQuestion = (state: QuestionsState, id: string): QuestionsState =>
  state.resolved.has(id) ? state : { pending: state.pending.filter((p) => p.id !== id), resolved: new Set(state.resolved).add(id) }

export const loadQuestions = (state: QuestionsState, list: ReadonlyArray<PendingQuestion>): QuestionsState => ({
  ...state,
  pending: oldestFirst(list.filter((p) => isWebTurns(p) && !state.resolved.has(p.id)))
})

/** Folds the question events of a batch into the pending questions. */
export const applyQuestionEvents = (state: QuestionsState, events: ReadonlyArray<ServerEvent>): QuestionsState =>
  events.reduce((acc, event) => {
    switch (event.type) {
      case "question": {
        const { type: _type, seq: _seq, at: _at, ...question } = event
        return addQuestion(acc, question)
      }
      case "question-resolved":
        return resolveQuestion(acc, event.id)
      default:
        return acc
    }
  }, state)
