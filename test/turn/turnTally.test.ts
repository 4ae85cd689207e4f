import { describe, expect, it } from "@effect/vitest"
import { noUsage } from "../../src/turn/TurnEvent.js"
import { stepLimit } from "../../src/turn/TurnFailure.js"
import { answered, beginTally, nextStep, outcomeOf, stopped } from "../../src/turn/turnTally.js"

const usage = { inputTokens: 10, outputTokens: 2, cachedInputTokens: 0, cacheWriteTokens: 0, costUsdCents: 0.5 }
const answer = (reply: string, calls: number) => ({ usage, modelMs: 100, reply, calls, maxSteps: 3 })

describe("turnTally: what a turn has done, step by step", () => {
  it("adds each step's usage and wait, keeps the last reply, and ends when the model asks for no tool", () => {
    const first = answered(nextStep(beginTally), answer("looking", 1))
    expect(first.ended).toBe(false)
    const second = answered(nextStep(first), answer("done", 0))
    expect(outcomeOf(second)).toEqual({
      reply: "done",
      delivered: true,
      steps: 2,
      usage: { ...usage, inputTokens: 20, outputTokens: 4, costUsdCents: 1 },
      modelMs: 200
    })
    // The tally before a step is left as it was.
    expect(first.step).toBe(1)
    expect(beginTally.usage).toBe(noUsage)
  })

  it("the last step still wanting tools ends with StepLimitReached; answering there does not", () => {
    const atLast = nextStep(nextStep(nextStep(beginTally)))
    expect(outcomeOf(answered(atLast, answer("more", 2))).failure).toEqual(stepLimit(3))
    expect(outcomeOf(answered(atLast, answer("fine", 0))).failure).toBeUndefined()
  })

  it("a stop keeps what the turn did and the model's wait; NO_REPLY and silence are not delivered", () => {
    const first = answered(nextStep(beginTally), answer("NO_REPLY", 1))
    expect(outcomeOf(first).delivered).toBe(false)
    const failed = outcomeOf(stopped(nextStep(first), stepLimit(3), 40))
    expect(failed).toMatchObject({ steps: 2, modelMs: 140, reply: "NO_REPLY", usage })
    expect(failed.failure?._tag).toBe("StepLimitReached")
    expect(outcomeOf(nextStep(beginTally)).delivered).toBe(false)
  })
})
