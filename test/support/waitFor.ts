import { Effect } from "effect"

/**
 * How long a test waits for a condition before it gives up: for a condition that never comes, not for one that is
 * slow. On a busy 2-core machine what takes 20 ms when it is quiet can take seconds.
 */
export const conditionBound = 60_000

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Polls `check` in real time until it holds or `bound` ms have passed; resolves with whether it held. */
export const waitUntil = async (check: () => boolean, bound = conditionBound): Promise<boolean> => {
  const deadline = Date.now() + bound
  while (!check()) {
    if (Date.now() > deadline) return false
    await pause(20)
  }
  return true
}

/** `waitUntil` as an Effect (real time, whatever clock the test runs under). */
export const eventually = (check: () => boolean, bound = conditionBound): Effect.Effect<boolean> =>
  Effect.promise(() => waitUntil(check, bound))

/** Polls an Effect `check` in real time until it holds or `bound` ms have passed; succeeds with whether it held. */
export const eventuallyEffect = <E, R>(check: Effect.Effect<boolean, E, R>, bound = conditionBound) =>
  Effect.gen(function*() {
    const deadline = Date.now() + bound
    while (Date.now() < deadline) {
      if (yield* check) return true
      yield* Effect.promise(() => pause(50))
    }
    return false
  })
