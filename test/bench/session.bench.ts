import { Context, Effect, Layer } from "effect"
import { build } from "esbuild"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import { cachedScript } from "../../scripts/esbuild-options.mjs"
import { AssistantMessage } from "../../src/session/messages.js"
import { SessionStore } from "../../src/session/SessionStore.js"
import type { Bench } from "./bench.js"
import { benchCacheFolder, benchKernBin } from "./kernBuild.js"
import type { ColdWindow } from "./coldWindow.js"
import { benchAgent, storeLayer } from "./fixtures.js"

/** Where the bench bundles sessionOpen.ts, and where bin/kern.js's loader is (bin/codeCache.js). */
const root = NodePath.resolve(import.meta.dirname, "../..")
const openBundle = NodePath.join(benchCacheFolder(root), "session-open.cjs")
const codeCache = NodePath.join(root, "bin", "codeCache.js")

/**
 * sessionOpen.ts as one CommonJS bundle with the options of kern's own (dist/main.cjs, dist/quickChatLocal.cjs), its V8
 * code cache written by a first open (not timed), as kern's build writes theirs by a first command.
 */
const buildOpenBundle = async (dir: string, messages: number) => {
  await build({
    ...cachedScript,
    sourcemap: false,
    entryPoints: [NodePath.join(import.meta.dirname, "sessionOpen.ts")],
    outfile: openBundle,
    // The fixtures find the repository from their own place, which the bundle does not share.
    define: { ...cachedScript.define, "import.meta.dirname": JSON.stringify(import.meta.dirname) }
  })
  NodeFs.rmSync(`${openBundle}.v8cache`, { force: true })
  firstOpen(dir, messages, "cached")
  if (!NodeFs.existsSync(`${openBundle}.v8cache`)) throw new Error(`the first open wrote no code cache beside ${openBundle}`)
  return NodeFs.readFileSync(`${openBundle}.v8cache`)
}

/** Throws unless the code cache is still the one `buildOpenBundle` wrote: V8 took it in every sample. */
const cacheTaken = (written: Buffer) => {
  if (!NodeFs.readFileSync(`${openBundle}.v8cache`).equals(written)) {
    throw new Error(`V8 refused the code cache of ${openBundle} (a sample wrote it again): the samples were not cached`)
  }
}

/**
 * One sample in a fresh node process, timed inside it from the start of the work: a user's process opens a session
 * once, with nothing compiled by V8 but what its code cache holds, so a sample in a warm process (the JIT trained by
 * the previous sample, the encoder already loaded) would measure what no user sees. The process loads the bundle as
 * bin/kern.js loads kern's (bin/codeCache.js: its code cache, under the runtime's V8 flags), or, for `uncached`, with
 * a plain require and no cache (a kern whose dist/ could not be written to). Node's own start and the bundle's
 * evaluation are the same for both sides and are left out. The OS file cache is warm for both (it cannot be dropped
 * without root; both read the same file).
 */
const coldSample = (fn: "openCold" | "parseCold", target: string, messages: number, load: "cached" | "uncached"): ColdWindow => {
  const loader = `const { loadCached, runtimeFlags } = require(${JSON.stringify(codeCache)}); runtimeFlags(); ` +
    (load === "cached" ? `const m = loadCached(${JSON.stringify(openBundle)}); ` : `const m = require(${JSON.stringify(openBundle)}); `)
  const script = `${loader}m.${fn}(${JSON.stringify(target)}, ${messages}).then((w) => process.stdout.write(JSON.stringify(w)))`
  const result = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", maxBuffer: 1 << 20 })
  let window: ColdWindow | undefined
  try {
    window = JSON.parse(result.stdout.trim().split("\n").pop() ?? "") as ColdWindow
  } catch {
    window = undefined
  }
  if (result.status !== 0 || window === undefined || !Number.isFinite(window.ms)) {
    throw new Error(`${fn} exited ${result.status}: ${result.stdout}${result.stderr}`)
  }
  return window
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)]!
}

/** A cold sample of the first open (kern.db new: an empty file says a fresh one is meant, so no count or cut is stored). */
const firstOpen = (dir: string, messages: number, load: "cached" | "uncached"): ColdWindow => {
  const db = NodePath.join(dir, ".kern", "kern.db")
  for (const file of [db, `${db}-wal`, `${db}-shm`]) NodeFs.rmSync(file, { force: true })
  NodeFs.writeFileSync(db, "")
  return coldSample("openCold", dir, messages, load)
}

/** The size of the session whose cold open is timed beside every size's: one exchange, a tool call and its result. */
const smallSession = 4

/**
 * Opening a whole session cold, against reading and parsing its file cold, alternating sample by sample. Beside the
 * samples (wall time), where it went: the main thread's CPU of each (`openMainThreadMs`, `floorMainThreadMs`, and
 * their ratio), the collector's pauses within each, and the share of each a full mark-compact landed in. And what
 * does not grow with the session: the same cold open of a 4-message session, sampled in turn with the others
 * (`smallOpenMs`), which is the layer's build, kern.db's creation and the runtime's first steps; and the open of the
 * session with no code cache (`uncachedOpenMs`: a kern whose dist/ it could not write its cache to).
 */
const load = (messages: number, runs: number) => async () => {
  const agent = benchAgent(messages)
  const small = benchAgent(smallSession)
  try {
    const cache = await buildOpenBundle(agent.dir, messages)
    const opens: Array<ColdWindow> = []
    const floors: Array<ColdWindow> = []
    const smallOpens: Array<number> = []
    const uncachedOpens: Array<number> = []
    for (let i = 0; i < runs; i++) {
      opens.push(firstOpen(agent.dir, messages, "cached"))
      floors.push(coldSample("parseCold", agent.session!, messages, "cached"))
      smallOpens.push(firstOpen(small.dir, smallSession, "cached").ms)
      uncachedOpens.push(firstOpen(agent.dir, messages, "uncached").ms)
    }
    cacheTaken(cache)
    const openMain = median(opens.map((w) => w.mainThreadMs))
    const floorMain = median(floors.map((w) => w.mainThreadMs))
    return {
      samples: opens.map((w) => w.ms),
      baseline: floors.map((w) => w.ms),
      extra: {
        // Where the system says what the main thread ran (Linux): NaN would be written as null in the result file.
        ...(Number.isFinite(openMain) && Number.isFinite(floorMain)
          ? { openMainThreadMs: openMain, floorMainThreadMs: floorMain, mainThreadRatio: openMain / floorMain }
          : {}),
        openGcMs: median(opens.map((w) => w.gcMs)),
        floorGcMs: median(floors.map((w) => w.gcMs)),
        opensWithMarkCompact: opens.filter((w) => w.markCompacts > 0).length / opens.length,
        floorsWithMarkCompact: floors.filter((w) => w.markCompacts > 0).length / floors.length,
        smallOpenMs: median(smallOpens),
        uncachedOpenMs: median(uncachedOpens)
      }
    }
  } finally {
    agent.remove()
    small.remove()
  }
}

const timeProcess = (args: ReadonlyArray<string>): number => {
  const start = performance.now()
  const result = spawnSync(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" })
  const elapsed = performance.now() - start
  if (result.status !== 0) throw new Error(`${args.join(" ")} exited ${result.status}: ${result.stderr}`)
  return elapsed
}

/**
 * `kern sessions list` as a whole process on a folder with one session of `messages`, against `node -e 0`, asked
 * again and again as scripts and status lines ask it: from the first listing on, the one the last ask kept.
 */
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
    // Beside the samples: the listing made again (what a user waits for right after the folder changed), with the
    // listing the last ask kept (src/quick/sessionsCache.ts) removed before each.
    const made: Array<number> = []
    for (let i = 0; i < Math.ceil(runs / 2); i++) {
      NodeFs.rmSync(NodePath.join(agent.dir, ".kern", "sessions-cache.json"), { force: true })
      made.push(timeProcess(args))
    }
    return { samples, baseline, extra: { madeMs: median(made) } }
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
  { name: "session.load.10k", unit: "ms (cold)", targets: [{ of: "ratio", atMost: 3 }], run: load(10_000, 9) },
  { name: "session.load.75k", unit: "ms (cold)", targets: [{ of: "ratio", atMost: 3 }], run: load(75_000, 5) },
  { name: "session.load.300k", unit: "ms (cold)", targets: [{ of: "ratio", atMost: 3 }], run: load(300_000, 3) },
  {
    name: "session.list.300k",
    unit: "ms (whole process)",
    usesBuild: true,
    targets: [{ of: "ratio", atMost: 1.7 }],
    run: list(300_000, 10)
  },
  { name: "session.list.empty", unit: "ms (whole process)", usesBuild: true, run: list(0, 10) },
  { name: "session.append", unit: "ms (p99 per round)", run: append }
]
