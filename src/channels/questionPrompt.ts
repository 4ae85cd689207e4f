import type { PendingQuestionInfo } from "./AgentEvent.js"

/** A question as a terminal shows it (the TUI, the attached TUI, `kern chat`): numbered options and how to answer. */
export const formatQuestion = (question: PendingQuestionInfo, expires: string): string => {
  const how = question.options.length === 0
    ? "type your answer"
    : question.multiSelect
    ? `type the numbers of your choices (e.g. 1,3)${question.allowText ? ", or your own answer" : ""}`
    : `type a number${question.allowText ? ", or your own answer" : ""}`
  return [
    "",
    `── question ${question.id}${question.interface === "terminal" || question.interface === "cli" ? "" : ` (for ${question.interface} ${question.userId})`}:`,
    ...question.question.split("\n").map((line) => `   ${line}`),
    ...question.options.map((option, n) => `   ${n + 1}. ${option}`),
    `   ${how}; the agent goes on without an answer at ${expires}`,
    ""
  ].join("\n")
}

export const formatQuestionResolved = (ended: {
  readonly id: string
  readonly outcome: string
  readonly choices: ReadonlyArray<string>
  readonly text?: string | undefined
  readonly by: string
}): string =>
  ended.outcome === "answered"
    ? `── question ${ended.id}: answered by ${ended.by}: ${[...ended.choices, ...(ended.text === undefined ? [] : [ended.text])].join(", ")}\n`
    : ended.outcome === "timeout"
    ? `── question ${ended.id}: nobody answered in time; the agent goes on\n`
    : `── question ${ended.id}: its turn was stopped\n`

/**
 * A typed answer to `question`: numbers (1-based, comma or space separated) pick options; anything else is the
 * person's own words (Questions refuses them where the question takes only its options).
 */
export const parseQuestionAnswer = (
  line: string,
  question: { readonly options: ReadonlyArray<string> }
): { readonly choices: ReadonlyArray<number>; readonly text?: string } => {
  const text = line.trim()
  if (question.options.length > 0 && /^\d+(\s*[, ]\s*\d+)*$/.test(text)) {
    return { choices: text.split(/[\s,]+/).map((n) => Number(n) - 1).filter((n) => n >= 0) }
  }
  return { choices: [], text }
}
