import { AiError } from "@effect/ai"
import { Schema } from "effect"

export const SpendCapName = Schema.Literal("perDay", "perUser", "perChannel")
export const SpendMeasure = Schema.Literal("usdCents", "tokens")

/**
 * A model call was refused before it was made: a daily spend cap (`limits` in .kern/config.json) is reached. Names
 * the cap, its value, what was spent, whose it is (`key`: '' for the whole agent, a user or a channel) and the day.
 */
export class BudgetExceeded extends Schema.TaggedError<BudgetExceeded>()("BudgetExceeded", {
  code: Schema.Literal("BUDGET_EXCEEDED"),
  cap: SpendCapName,
  measure: SpendMeasure,
  limit: Schema.Number,
  spent: Schema.Number,
  key: Schema.String,
  /** `YYYY-MM-DD` in the agent's timezone. */
  day: Schema.String,
  message: Schema.String
}) {}

const amount = (measure: typeof SpendMeasure.Type, value: number): string =>
  measure === "usdCents" ? `${value.toFixed(2)}¢` : `${Math.round(value)} tokens`

const whose = (cap: typeof SpendCapName.Type, key: string): string =>
  cap === "perDay" ? "the agent" : cap === "perUser" ? `user ${key}` : `channel ${key}`

export interface ReachedCap {
  readonly cap: typeof SpendCapName.Type
  readonly measure: typeof SpendMeasure.Type
  readonly limit: number
  readonly spent: number
  readonly key: string
  readonly day: string
}

export const budgetExceeded = (fields: ReachedCap): BudgetExceeded =>
  new BudgetExceeded({
    ...fields,
    code: "BUDGET_EXCEEDED",
    message: `BUDGET_EXCEEDED: the daily cap limits.${fields.cap}.${fields.measure} (${amount(fields.measure, fields.limit)}) ` +
      `is reached for ${whose(fields.cap, fields.key)} on ${fields.day} (${amount(fields.measure, fields.spent)} spent): ` +
      `model calls are refused until the day ends or the cap is raised`
  })

/**
 * A refusal as the error a LanguageModel fails with (its methods fail with AiError): the BudgetExceeded rides as the
 * cause, and `budgetRefusal` finds it again.
 */
export const asAiError = (method: string, error: BudgetExceeded): AiError.AiError =>
  new AiError.UnknownError({ module: "SpendGuard", method, description: error.message, cause: error })

/** The refusal inside a model call's failure, if that is what it was. */
export const budgetRefusal = (error: unknown): BudgetExceeded | undefined =>
  error instanceof BudgetExceeded
    ? error
    : AiError.isAiError(error) && error._tag === "UnknownError" && error.cause instanceof BudgetExceeded
    ? error.cause
    : undefined
