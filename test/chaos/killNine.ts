import { Effect, Fiber } from "effect"
import { drain, report, say, sendEvery, setUp, watchStalls } from "./setup.js"

/**
 * The kill-9 run (issue 24): messages arrive on Telegram, Slack and HTTP at about two a second while the background
 * agent is killed with SIGKILL at random moments and started again; then everything drains and each channel is
 * counted. Resolves with the exit code: 1 on any loss, duplicate, undelivered reply or stale placeholder.
 */
export const runKillNine = (kills: number, tailSeconds = 3) =>
  Effect.scoped(Effect.gen(function*() {
    const run = yield* setUp({ maxThinkMs: 300 })
    const started = Date.now()
    const sender = yield* sendEvery(run, 500)
    const watcher = yield* watchStalls(run)
    for (let k = 1; k <= kills; k++) {
      yield* Effect.sleep(`${300 + Math.floor(Math.random() * 5_700)} millis`)
      yield* run.agent.killNine
      yield* say(`kill -9 ${k}/${kills} at +${((Date.now() - started) / 1000).toFixed(1)} s`)
      yield* Effect.sleep(`${Math.floor(Math.random() * 1_000)} millis`)
      yield* run.agent.start
    }
    yield* Effect.sleep(`${tailSeconds} seconds`)
    yield* Fiber.interrupt(sender)
    yield* Fiber.interrupt(watcher)
    const drained = yield* drain(run)
    if (!drained) yield* say("PROBLEM: the agent did not drain within 180 s")
    const { found } = yield* report(run, `kill -9 run: ${kills} kills in ${((Date.now() - started) / 1000).toFixed(0)} s`)
    yield* run.agent.stop
    return found.length === 0 && drained ? 0 : 1
  }))

export const main = (argv: ReadonlyArray<string>): Promise<number> => {
  const at = argv.indexOf("--kills")
  const kills = at === -1 ? 30 : Number(argv[at + 1])
  const tail = argv.indexOf("--tail")
  return Effect.runPromise(runKillNine(kills, tail === -1 ? 3 : Number(argv[tail + 1])))
}
