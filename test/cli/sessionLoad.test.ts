import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schedule } from "effect"
import type { ChildProcess } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { initAgentWithModel } from "../support/agentFolder.js"
import { runKern } from "../support/cli.js"
import { make as makeFakeServer } from "../support/fakeModelServer.js"
import { writeSessionFixture } from "../support/sessionFixture.js"

/** Whether `pid` holds `path` open for reading only (the load; the session's writer opens it for appending). */
const readingIt = (pid: number, path: string): boolean => {
  const dir = `/proc/${pid}/fd`
  const fds = NodeFs.existsSync(dir) ? NodeFs.readdirSync(dir) : []
  return fds.some((fd) => {
    const target = Option.getOrUndefined(Option.liftThrowable(NodeFs.readlinkSync)(NodePath.join(dir, fd)))
    if (target !== path) return false
    const info = Option.getOrUndefined(Option.liftThrowable((file: string) => NodeFs.readFileSync(file, "utf8"))(`/proc/${pid}/fdinfo/${fd}`))
    const flags = /flags:\s*([0-7]+)/.exec(info ?? "")?.[1]
    return flags !== undefined && (Number.parseInt(flags, 8) & 3) === 0
  })
}

describe("kern chat on a long session", () => {
  it.live("SIGTERM while the session is still loading stops kern at once, before any model call", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      // Large enough that loading takes about a second here (session.load.300k: 1.2 s), well past the wait below:
      // at 100,000 messages the faster load could end before the signal, and the chat went on to its model call.
      const session = writeSessionFixture(dir, 250_000)
      const before = NodeFs.statSync(session).size
      let child: ChildProcess | undefined
      // A kern deaf to SIGTERM must not outlive the test.
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.exitCode === null && child.kill("SIGKILL")))
      const done = Effect.promise(() =>
        runKern(["chat", "-m", "hi"], { cwd: dir, env: { OPENROUTER_API_KEY: "sk-test" }, onSpawn: (c) => (child = c) })
      )
      const result = yield* Effect.fork(done)
      // Wait until kern has the session open for reading: the load has begun.
      yield* Effect.sync(() => child !== undefined && child.pid !== undefined && readingIt(child.pid, session)).pipe(
        Effect.repeat({ schedule: Schedule.spaced("2 millis"), until: (open) => open })
      )
      // Past the first reads: a kern that read the whole file at once is parsing it by now, deaf to signals.
      yield* Effect.sleep("300 millis")
      child!.kill("SIGTERM")
      const exit = yield* result.await
      expect(exit._tag).toBe("Success")
      const outcome = exit._tag === "Success" ? exit.value : undefined
      expect(outcome?.status).toBe(130)
      expect(outcome?.stderr).not.toMatch(/at .*\.js:\d+/)
      expect(yield* server.requests).toHaveLength(0)
      expect(NodeFs.statSync(session).size).toBe(before)
    })), 120_000)
})
