import { Effect, Fiber } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { fillDisk, tinyDisk } from "../support/tinyDisk.js"
import { drain, report, say, sendEvery, setUp } from "./setup.js"
import { readSessions } from "./tally.js"

/** Where the tiny disk goes: the session files only, or all of `.kern` (kern.db and its inbox too). */
export type DiskFullTarget = "sessions" | "kern"

/** Mounts a tiny tmpfs at `.kern/sessions` or `.kern` of the folder, keeping what init put there. */
const mountTiny = (dir: string, target: DiskFullTarget, size: string) =>
  Effect.gen(function*() {
    const mountPoint = NodePath.join(dir, target === "sessions" ? ".kern/sessions" : ".kern")
    const aside = `${mountPoint}.before-mount`
    NodeFs.mkdirSync(mountPoint, { recursive: true })
    NodeFs.renameSync(mountPoint, aside)
    yield* tinyDisk(mountPoint, size)
    NodeFs.cpSync(aside, mountPoint, { recursive: true, preserveTimestamps: true })
    NodeFs.rmSync(aside, { recursive: true })
    return mountPoint
  })

/**
 * The disk-full run (issue 24): the agent's sessions (or all of .kern) on a tiny tmpfs; messages at about two a
 * second on Telegram, Slack and HTTP; the disk is filled, then the filler deleted, while messages keep coming; then
 * a restart (a refused message must not come back then). Resolves with the exit code: 1 on any loss, duplicate,
 * undelivered reply or stale placeholder.
 */
export const runDiskFull = (target: DiskFullTarget, phaseSeconds: number) =>
  Effect.scoped(Effect.gen(function*() {
    let mountPoint = ""
    const run = yield* setUp({
      maxThinkMs: 300,
      prepare: (dir) => Effect.map(mountTiny(dir, target, target === "sessions" ? "1m" : "16m"), (point) => {
        mountPoint = point
      })
    })
    const filler = NodePath.join(mountPoint, "filler")
    const started = Date.now()
    const at = () => `+${((Date.now() - started) / 1000).toFixed(1)} s`
    const sender = yield* sendEvery(run, 500)
    yield* Effect.sleep(`${phaseSeconds} seconds`)
    const code = fillDisk(filler)
    yield* say(`${at()}: disk full (${code}), filler ${NodeFs.statSync(filler).size} bytes`)
    yield* Effect.sleep(`${phaseSeconds} seconds`)
    NodeFs.rmSync(filler)
    yield* say(`${at()}: space freed`)
    yield* Effect.sleep(`${phaseSeconds} seconds`)
    yield* Fiber.interrupt(sender)
    const drained = yield* drain(run)
    if (!drained) yield* say("PROBLEM: the agent did not drain within 180 s")
    // A message refused while the disk was full must stay refused: a restart must not answer it late.
    const sessionsDir = NodePath.join(run.agent.dir, ".kern/sessions")
    const before = new Set(readSessions(sessionsDir).stored.keys())
    yield* run.agent.stop
    yield* run.agent.start
    yield* say(`${at()}: restarted`)
    const again = yield* drain(run)
    const late = [...readSessions(sessionsDir).stored.keys()].filter((marker) => !before.has(marker))
    const { found } = yield* report(run, `disk-full run (${target} on a tiny tmpfs), ${phaseSeconds} s per phase`)
    if (late.length > 0) {
      const perChannel = ["tg", "sl", "ht"].map((kind) => `${kind} ${late.filter((m) => m.includes(`-${kind}-`)).length}`).join(", ")
      yield* say(`PROBLEM ${late.length} messages taken only after the restart (${perChannel}): ${late.slice(0, 10).join(", ")}`)
    }
    yield* run.agent.stop
    // The tiny disk goes with the run: what was on it (the log, kern.db, the sessions) is kept beside the folder.
    const kept = NodePath.join(NodePath.dirname(run.agent.dir), "tiny-disk-at-end")
    NodeFs.cpSync(mountPoint, kept, { recursive: true })
    yield* say(`the tiny disk's files: ${kept}`)
    return found.length === 0 && late.length === 0 && drained && again ? 0 : 1
  }))

export const main = (argv: ReadonlyArray<string>): Promise<number> => {
  const on = argv.indexOf("--on")
  const target: DiskFullTarget = on !== -1 && argv[on + 1] === "kern" ? "kern" : "sessions"
  const phase = argv.indexOf("--phase")
  return Effect.runPromise(runDiskFull(target, phase === -1 ? 15 : Number(argv[phase + 1])))
}
