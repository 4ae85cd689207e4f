import type { AutoRecall } from "../recall/autoRecall.js"
import { addUsage, noUsage, type TurnUsage } from "./TurnEvent.js"
import { stepLimit, type TurnFailure } from "./TurnFailure.js"
import { isDeliverable } from "./replyFilter.js"

export interface TurnOutcome {
  readonly reply: string
  readonly delivered: boolean
  readonly steps: number
  readonly usage: TurnUsage
  /** Time spent waiting on the model (all steps), in milliseconds: the rest of the turn is kern's own. */
  readonly modelMs: number
  /** Why the turn ended without the model's final answer; absent when it finished. */
  readonly failure?: TurnFailure
}

/**
 * What a turn has done so far. Each model step makes the next tally from the last one (nothing is changed in place),
 * so a step's effect on the turn is one of the transitions below.
 */
export interface TurnTally {
  /** The steps begun, the current one included. */
  readonly step: number
  readonly usage: TurnUsage
  readonly modelMs: number
  /** The last answer's text, secrets redacted. */
  readonly reply: string
  /** What auto-recall added at the first step, carried to the later ones. */
  readonly recalled: AutoRecall | undefined
  readonly ended: boolean
  readonly failure: TurnFailure | undefined
}

export const beginTally: TurnTally = {
  step: 0,
  usage: noUsage,
  modelMs: 0,
  reply: "",
  recalled: undefined,
  ended: false,
  failure: undefined
}

export const nextStep = (tally: TurnTally): TurnTally => ({ ...tally, step: tally.step + 1 })

export const withRecalled = (tally: TurnTally, recalled: AutoRecall | undefined): TurnTally => ({ ...tally, recalled })

/** The turn stops without an answer (a budget cap, the provider): what it did so far stays counted. */
export const stopped = (tally: TurnTally, failure: TurnFailure, modelMs = 0): TurnTally => ({
  ...tally,
  modelMs: tally.modelMs + modelMs,
  ended: true,
  failure
})

/**
 * The model answered: its usage and wait are added and its text is the reply so far. The turn ends when it asked for
 * no tool, or at the last step (`maxSteps`), which it reached still wanting tools.
 */
export const answered = (
  tally: TurnTally,
  answer: { readonly usage: TurnUsage; readonly modelMs: number; readonly reply: string; readonly calls: number; readonly maxSteps: number }
): TurnTally => {
  const lastStep = tally.step >= answer.maxSteps
  const wantsTools = answer.calls > 0
  return {
    ...tally,
    usage: addUsage(tally.usage, answer.usage),
    modelMs: tally.modelMs + answer.modelMs,
    reply: answer.reply,
    ended: !wantsTools || lastStep,
    failure: wantsTools && lastStep ? stepLimit(answer.maxSteps) : tally.failure
  }
}

/** The turn's outcome: delivered when the reply says something (not empty, not NO_REPLY). */
export const outcomeOf = (tally: TurnTally): TurnOutcome => ({
  reply: tally.reply,
  delivered: isDeliverable(tally.reply),
  steps: tally.step,
  usage: tally.usage,
  modelMs: tally.modelMs,
  ...(tally.failure === undefined ? {} : { failure: tally.failure })
})
