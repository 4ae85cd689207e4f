import { Cause, Effect, Either, Exit, Option, Schedule, type Tracer } from "effect"
import { RunContext, type RunContextData } from "./RunContext.js"
import { runToolFiber, type ToolFiberExit } from "./toolFiber.js"
import { ToolFailure } from "./ToolFailure.js"
import type { CallServices, RegisteredTool } from "./ToolRegistry.js"

/** Retries back off exponentially from 100 ms with jitter; how many depends on the tool and the run. */
const retrySchedule = Schedule.exponential("100 millis").pipe(Schedule.jittered)

/**
 * A handler's failure as the executor reports it: its own ToolFailure, or UNEXPECTED for a defect or interrupt. A
 * defect (the handler threw) is retryable, as seed 002's step 5 retries an exception; an interrupt is not.
 */
const asToolFailure = (toolId: string, cause: Cause.Cause<ToolFailure>): ToolFailure => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) return failure.value
  if (Cause.isInterruptedOnly(cause)) {
    return new ToolFailure({ code: "UNEXPECTED", message: `${toolId} was interrupted`, retryable: false })
  }
  const message = `${toolId} failed unexpectedly: ${describeDefect(Cause.squash(cause))}`
  return new ToolFailure({ code: "UNEXPECTED", message, retryable: true })
}

const describeDefect = (defect: unknown) => (defect instanceof Error ? defect.message : String(defect))

/** What the attempts at one call came to. */
export interface Attempts {
  readonly outcome: Either.Either<unknown, ToolFailure>
  readonly attempts: number
  /** The last attempt's span, when the tool is traced. */
  readonly spanId: string | undefined
}

/**
 * Step 7 of the executor: runs a handler whose arguments are decoded, each attempt in a fiber of its own with the
 * tool's timeout, a Scope and, when the call is traced, a `kern.tool.execute` span carrying tool id, run id and
 * attempt. An idempotent tool's retryable failure, or an exception its handler throws, is retried with exponential
 * jittered backoff on the Clock, at most min(spec.maxRetries, budget.maxRetriesPerTool) times. Never fails: the outcome is an Either. Make one per
 * call, as it is run: it counts that call's attempts, and its first attempt starts as it is made. What the call does
 * next (`then`, the executor's end of the call) is continued from the step that ends the attempts, with no step of
 * its own.
 */
export const runAttempts = <B>(
  tool: RegisteredTool,
  handler: (args: unknown) => Effect.Effect<unknown, ToolFailure, CallServices>,
  args: unknown,
  ctx: RunContextData,
  /** Whether each attempt gets a span: the tool is traced and a tracer keeps spans (spansKept.ts). */
  traced: boolean,
  /** The call's span, the attempts' parent; the caller's span when absent. */
  parent: Tracer.AnySpan | undefined,
  then: (attempts: Attempts) => Effect.Effect<B>
): Effect.Effect<B> => {
  const spec = tool.spec
  const timeoutMs = Math.max(spec.timeoutMs, tool.timeoutFor?.(args) ?? 0)
  const onTimeout = () =>
    new ToolFailure({ code: "TIMEOUT", message: `${spec.toolId} timed out after ${timeoutMs} ms`, retryable: false })
  const service = { tag: RunContext, value: ctx }
  // Counted per call: the retry schedule re-runs `attempt`. The last attempt's span identifies the call.
  let attempts = 0
  let spanId: string | undefined
  /** One more attempt, in its fiber. */
  const fiber = () => {
    attempts += 1
    const span = traced
      ? {
        name: "kern.tool.execute",
        attributes: { "kern.tool.id": spec.toolId, "kern.run.id": ctx.runId, "kern.tool.attempt": attempts },
        parent
      }
      : undefined
    return runToolFiber(handler(args), { context: tool.services, service, timeout: timeoutMs, onTimeout, span })
  }
  const outcomeOf = ({ exit, span }: ToolFiberExit<unknown, ToolFailure>): Either.Either<unknown, ToolFailure> => {
    spanId = span?.spanId
    return Exit.isSuccess(exit) ? Either.right(exit.value) : Either.left(asToolFailure(spec.toolId, exit.cause))
  }
  const attempt = Effect.suspend(() => Effect.map(fiber(), outcomeOf))
  const times = spec.idempotent ? Math.min(spec.maxRetries, ctx.budget.limits.maxRetriesPerTool) : 0
  const done = (outcome: Either.Either<unknown, ToolFailure>): Attempts => ({ outcome, attempts, spanId })
  // A self-timed tool (an MCP request) keeps to its timeout and ends its work on an interrupt by itself, and needs no
  // service: its untraced, unretried call runs in the caller's fiber, with no fiber, Scope or timer of the kernel's.
  // Not a test's override of its handler, which may ask for the call's services.
  if (times === 0 && !traced && tool.selfTimed === true && handler === tool.handler) {
    attempts = 1
    return Effect.matchCauseEffect(handler(args) as Effect.Effect<unknown, ToolFailure>, {
      onFailure: (cause) => then(done(Either.left(asToolFailure(spec.toolId, cause)))),
      onSuccess: (value) => then(done(Either.right(value)))
    })
  }
  // One attempt, the common case: started as the caller runs this (it does as soon as it is made), in one step.
  if (times === 0) return Effect.flatMap(fiber(), (ended) => then(done(outcomeOf(ended))))
  // The retry driver is built only after a first retryable failure: most calls succeed at once. It starts from
  // a replay of that failure, so the schedule's first delay comes before the second attempt.
  return Effect.flatMap(attempt, (first) => {
    if (Either.isRight(first) || !first.left.retryable) return then(done(first))
    let replay = true
    const again = Effect.suspend(() => {
      if (!replay) return Effect.flatMap(attempt, Either.match({ onLeft: Effect.fail, onRight: Effect.succeed }))
      replay = false
      return Effect.fail(first.left)
    })
    return Effect.retry(again, { schedule: retrySchedule, times, while: (failure) => failure.retryable }).pipe(
      Effect.either,
      Effect.flatMap((outcome) => then(done(outcome)))
    )
  })
}
