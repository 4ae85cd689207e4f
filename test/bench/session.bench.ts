import { Context, Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import { AssistantMessage } from "../../src/session/messages.js"
import { SessionStore } from "../../src/session/SessionStore.js"
import type { Bench } from "./bench.js"
import { benchKernBin } from "./kernBuild.js"
import { benchAgent, storeLayer } from "./fixtures.js"


/** The plain way to read a JSONL file: the whole file as a string, JSON.parse of every line. */
const readAndParse = (path: string) => {
  const text = NodeFs.readFileSync(path, "utf8")
  let count = 0
  for (const line of text.split("\n")) {
    if (line !== "") {
      JSON.parse(line)
      count++
    }
  }
  return count
}

/**
 * Loading a session as `kern chat` does (open the newest session: stream and decode the file, repair, record its
 * count, build the in-memory history and prompt), against reading the file and JSON.parse of each line.
 */
const load = (messages: number, runs: number) => async () => {
  const agent = benchAgent(messages)
  try {
    return await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(storeLayer(agent.dir))
      const once = Effect.scoped(openActiveSession()).pipe(Effect.provide(context))
      const samples: Array<number> = []
      const baseline: Array<number> = []
      for (let i = 0; i < runs + 1; i++) {
        const start = performance.now()
        const { session } = yield* once
        const ms = performance.now() - start
        const baseStart = performance.now()
        const lines = readAndParse(agent.session!)
        const baseMs = performance.now() - baseStart
        const loaded = yield* session.history.size
        if (loaded !== messages || lines !== messages + 1) {
          return yield* Effect.die(`loaded ${loaded} messages and parsed ${lines} lines of a ${messages}-message session`)
        }
        // The first round warms the file cache and the JIT for both.
        if (i > 0) {
          samples.push(ms)
          baseline.push(baseMs)
        }
      }
      return { samples, baseline }
    })))
  } finally {
    agent.remove()
  }
}

const timeProcess = (args: ReadonlyArray<string>): number => {
  const start = performance.now()
  const result = spawnSync(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" })
  const elapsed = performance.now() - start
  if (result.status !== 0) throw new Error(`${args.join(" ")} exited ${result.status}: ${result.stderr}`)
  return elapsed
}

/** `kern sessions list` as a whole process on a folder with one session of `messages`, against `node -e 0`. */
const list = (messages: number, runs: number) => async () => {
  const agent = benchAgent(messages)
  try {
    const args = [benchKernBin(), "sessions", "list", "--dir", agent.dir]
    // The first listing counts the session (there is no kern.db yet); every later one reads the count.
    const first = spawnSync(process.execPath, args, { encoding: "utf8" })
    if (!first.stdout.includes(String(messages))) throw new Error(`kern sessions list did not show ${messages}: ${first.stdout}${first.stderr}`)
    timeProcess(["-e", "0"])
    const samples: Array<number> = []
    const baseline: Array<number> = []
    for (let i = 0; i < runs; i++) {
      samples.push(timeProcess(args))
      baseline.push(timeProcess(["-e", "0"]))
    }
    return { samples, baseline }
  } finally {
    agent.remove()
  }
}

const rounds = 10
const appendsPerRound = 200

const p99 = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.99) - 1] ?? Number.NaN

/** p99 of one appended message (the line and its count in kern.db) per round of 200, and with a bare appendFileSync. */
const append = async () => {
  const agent = benchAgent(undefined)
  try {
    return await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const store = Context.get(yield* Layer.build(storeLayer(agent.dir)), SessionStore)
      const { writer } = yield* store.open(yield* store.create)
      const raw = NodePath.join(agent.dir, "raw.jsonl")
      const message = new AssistantMessage({ text: "the DHCP range moved to .100-.200 and DNS now points at the pi.", at: "2026-11-22T10:00:00.000Z" })
      const line = `${JSON.stringify(message)}\n`
      const samples: Array<number> = []
      const baseline: Array<number> = []
      for (let round = 0; round < rounds; round++) {
        const ours: Array<number> = []
        const bare: Array<number> = []
        for (let i = 0; i < appendsPerRound; i++) {
          const start = performance.now()
          yield* writer.append(message)
          ours.push(performance.now() - start)
          const rawStart = performance.now()
          NodeFs.appendFileSync(raw, line)
          bare.push(performance.now() - rawStart)
        }
        samples.push(p99(ours))
        baseline.push(p99(bare))
      }
      return { samples, baseline }
    })))
  } finally {
    agent.remove()
  }
}

export const benches: ReadonlyArray<Bench> = [
  { name: "session.load.10k", unit: "ms", run: load(10_000, 9) },
  { name: "session.load.75k", unit: "ms", run: load(75_000, 5) },
  { name: "session.load.300k", unit: "ms", run: load(300_000, 3) },
  { name: "session.list.300k", unit: "ms (whole process)", usesBuild: true, run: list(300_000, 10) },
  { name: "session.list.empty", unit: "ms (whole process)", usesBuild: true, run: list(0, 10) },
  { name: "session.append", unit: "ms (p99 per round)", run: append }
]
