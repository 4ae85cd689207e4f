import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { JobStore, type NewJob } from "../../src/tools/JobStore.js"
import { databases } from "../support/databases.js"

// The background jobs' repository on both databases: ids that grow, an end recorded once, reads by state and
// conversation.

const job = (command: string, conversation = "main"): NewJob => ({
  command,
  conversation,
  originInterface: "web",
  originChannel: "web",
  originUser: "operator",
  sessionId: "s1",
  tag: command.split(" ")[0]!,
  outputFile: `/tmp/jobs/${command.length}.log`,
  startedAtMs: 1_795_000_000_000
})

describe.each(databases)("the job store on $dialect", ({ layer }) => {
  it.effect("adds running jobs with growing ids, records each end once, and reads them by state and conversation", () =>
    Effect.gen(function*() {
      const jobs = yield* JobStore
      const build = yield* jobs.add(job("npm run build"))
      const watch = yield* jobs.add(job("tail -f log", "telegram:42"))
      const serve = yield* jobs.add(job("python3 -m http.server"))
      expect([build < watch, watch < serve]).toEqual([true, true])
      yield* jobs.setPid(build, 4242)
      expect(Option.getOrThrow(yield* jobs.get(build))).toEqual({
        ...job("npm run build"),
        id: build,
        state: "running",
        pid: 4242,
        endedAtMs: null,
        exitCode: null,
        signal: null,
        outputBytes: 0,
        droppedBytes: 0,
        artifactId: null
      })
      const ended = { state: "finished", endedAtMs: 1_795_000_060_000, exitCode: 0, signal: null, outputBytes: 5_000_000_000, droppedBytes: 12, artifactId: "art_1" } as const
      expect(yield* jobs.end(build, ended)).toBe(true)
      expect(yield* jobs.end(build, { ...ended, state: "killed", signal: "SIGTERM" })).toBe(false)
      expect(yield* jobs.end(987_654, ended)).toBe(false)
      expect(Option.getOrThrow(yield* jobs.get(build))).toMatchObject({ state: "finished", exitCode: 0, signal: null, outputBytes: 5_000_000_000, artifactId: "art_1" })
      expect((yield* jobs.running).map((row) => row.id)).toEqual([watch, serve])
      expect((yield* jobs.recent(null)).map((row) => row.id)).toEqual([serve, watch, build])
      expect((yield* jobs.recent("main", 1)).map((row) => row.id)).toEqual([serve])
      expect((yield* jobs.recent("telegram:42")).map((row) => row.command)).toEqual(["tail -f log"])
      expect(Option.isNone(yield* jobs.get(987_654))).toBe(true)
    }).pipe(Effect.provide(JobStore.Default.pipe(Layer.provide(layer)))))
})
