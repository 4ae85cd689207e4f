import { Effect, Layer } from "effect"
import * as NodeV8 from "node:v8"

/**
 * Keeps a model's regular expression from freezing the process. grep and the other tools run patterns the model
 * wrote, synchronously; one with nested quantifiers, such as `(a+)+$` on a long line, backtracks exponentially and
 * would block the event loop, so no timeout could fire and every channel would stall. This V8 flag makes a
 * pattern that backtracks excessively finish on V8's linear-time engine instead. It is process-wide, takes effect
 * for patterns compiled before it too, and setting it again does nothing. Patterns the linear engine cannot run
 * (backreferences, lookarounds, large counted repetitions) are not covered: the second flag lets V8 say which
 * those are (it accepts the `l` flag only for the others), and regexWorker.ts runs them in a worker thread.
 */
export const guardBacktracking = Effect.sync(() => {
  NodeV8.setFlagsFromString("--enable-experimental-regexp-engine-on-excessive-backtracks")
  NodeV8.setFlagsFromString("--enable-experimental-regexp-engine")
})

/** Sets the guard when the tools are built, so an app that embeds them is covered too. */
export const layer = Layer.effectDiscard(guardBacktracking)
