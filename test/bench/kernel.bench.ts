import { Effect, Layer, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import * as ApprovalGate from "../../src/kernel/ApprovalGate.js"
import * as ContractBaselineStore from "../../src/kernel/ContractBaselineStore.js"
import * as EventLog from "../../src/kernel/EventLog.js"
import { makeRunContext, RunContext } from "../../src/kernel/RunContext.js"
import * as ToolExecutor from "../../src/kernel/ToolExecutor.js"
import * as ToolPolicy from "../../src/kernel/ToolPolicy.js"
import * as ToolRegistry from "../../src/kernel/ToolRegistry.js"
import * as Database from "../../src/storage/Database.js"
import { type Bench, median } from "./bench.js"

const Args = Schema.Struct({ n: Schema.Number })
type Handler = (args: { readonly n: number }) => Effect.Effect<number>
const noopHandler: Handler = (args) => Effect.succeed(args.n)

/**
 * A handler that suspends, as every MCP call, bash run and HTTP tool does: it answers on the next macrotask
 * (setImmediate), so the executor takes its path for work that has not finished when it first yields.
 */
const suspendingHandler: Handler = (args) =>
  Effect.async<number>((resume) => {
    const immediate = setImmediate(() => resume(Effect.succeed(args.n)))
    return Effect.sync(() => clearImmediate(immediate))
  })

const kernel = (eventLog: Layer.Layer<EventLog.EventLog, unknown>) =>
  ToolExecutor.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(
      ToolRegistry.layer,
      ToolPolicy.normal(),
      ApprovalGate.denyAll(),
      eventLog,
      ContractBaselineStore.layerNone,
      ToolExecutor.settings("observe"),
      KnownSecrets.layerNone
    ))
  )

const batch = 2000
const rounds = 15

/**
 * The main thread's time on a core and waiting for one (ns), from Linux's schedstat; undefined elsewhere. A sample's
 * wall time is these two plus the time the thread slept (blocked: a file sync, a lock, a timer).
 */
const mainThreadSched = (): { readonly run: number; readonly queued: number } | undefined => {
  try {
    const [run, queued] = NodeFs.readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ").map(Number)
    return run === undefined || queued === undefined ? undefined : { run, queued }
  } catch {
    return undefined
  }
}

/**
 * Per-call microseconds: `rounds` samples of `batch` calls each, through the executor and directly, with the CPU time
 * per call of each reported beside (`cpuUs`, `baselineCpuUs`; the process's, SQLite's and GC's included). The tool is
 * traced and measured (the spec defaults). The RunContext is provided once around the loop, as one run makes many
 * calls; the agent and the CLI hold theirs and call `executeIn`, which is this same path.
 *
 * An executor sample ends once its calls' events are in kern.db (`flush`): the event log's move into kern.db is work
 * the calls made, and a background batch left pending would land in whichever sample runs next, the direct
 * baseline's among them (it did: baseline CPU 7–12 µs a call against ~1 with no log). Where Linux tells, the main
 * thread's wait for a core (`queuedUs`) and its sleep (`sleptUs`: wall less on-core less queued) are reported per
 * call, so a wall time above the CPU time says whether the calls waited for the machine or for something of kern's.
 */
const measure = (eventLog: Layer.Layer<EventLog.EventLog, unknown>, handler: Handler = noopHandler) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry.ToolRegistry
    const executor = yield* ToolExecutor.ToolExecutor
    yield* registry.register({ toolId: "bench.noop", name: "Noop", emitMetric: true, emitTrace: true }, {
      parameters: Args,
      handler
    })
    const log = yield* EventLog.EventLog
    const viaExecutor = executor.execute("bench.noop", { n: 1 })
    const direct = Effect.flatMap(Schema.decodeUnknown(Args)({ n: 1 }), handler)
    const cpu: Array<number> = []
    const baselineCpu: Array<number> = []
    const queued: Array<number> = []
    const slept: Array<number> = []
    const time = (
      effect: Effect.Effect<unknown, unknown, RunContext>,
      after: Effect.Effect<unknown, unknown>,
      cpuInto?: Array<number>
    ) =>
      Effect.gen(function*() {
        const schedStart = mainThreadSched()
        const start = performance.now()
        const cpuStart = process.cpuUsage()
        for (let i = 0; i < batch; i++) yield* effect
        yield* after
        const used = process.cpuUsage(cpuStart)
        const wall = ((performance.now() - start) * 1000) / batch
        const schedEnd = mainThreadSched()
        cpuInto?.push((used.user + used.system) / batch)
        if (cpuInto === cpu && schedStart !== undefined && schedEnd !== undefined) {
          const queuedUs = (schedEnd.queued - schedStart.queued) / 1000 / batch
          queued.push(queuedUs)
          slept.push(Math.max(0, wall - (schedEnd.run - schedStart.run) / 1000 / batch - queuedUs))
        }
        return wall
      })
    yield* time(viaExecutor, log.flush)
    yield* time(direct, Effect.void)
    const samples: Array<number> = []
    const baseline: Array<number> = []
    for (let i = 0; i < rounds; i++) {
      samples.push(yield* time(viaExecutor, log.flush, cpu))
      baseline.push(yield* time(direct, Effect.void, baselineCpu))
    }
    // Every call's event reached kern.db: the figure is not bought by dropping audit writes.
    const written = yield* log.count
    if (log.enabled && written !== (rounds + 1) * batch) {
      return yield* Effect.die(new Error(`${written} events in kern.db for ${(rounds + 1) * batch} calls`))
    }
    // CPU time per call beside the wall time: on a shared machine a sample's wall time includes waiting for a core.
    // What the executor adds, wall and CPU: each sample over the direct sample taken after it, the median of those.
    const over = (kern: ReadonlyArray<number>, direct: ReadonlyArray<number>) => median(kern.map((value, i) => value - (direct[i] ?? 0)))
    return {
      samples,
      baseline,
      extra: {
        cpuUs: median(cpu),
        baselineCpuUs: median(baselineCpu),
        overheadUs: over(samples, baseline),
        overheadCpuUs: over(cpu, baselineCpu),
        ...(queued.length === 0 ? {} : { queuedUs: median(queued), sleptUs: median(slept) })
      }
    }
  }).pipe(
    Effect.provideServiceEffect(RunContext, makeRunContext({ budget: { maxToolCalls: Number.MAX_SAFE_INTEGER } })),
    Effect.provide(kernel(eventLog))
  )

/** A web page's worth of text, as a NETWORK tool returns it: what the secret guard scans on every call. */
const page = "<p>kern fetched this page; nothing secret in it, only ordinary words and numbers 0123456789.</p>\n".repeat(170)
const secrets = {
  OPENROUTER_API_KEY: "sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef",
  TELEGRAM_BOT_TOKEN: "123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ",
  SLACK_BOT_TOKEN: "xoxb-0123456789-0123456789-abcdefghijklmnop",
  DB_PASSWORD: "correct-horse-battery-staple"
}

/**
 * Per-call microseconds of a NETWORK tool returning a 16 KB page with four known secrets (its arguments checked,
 * its result scanned), against the same executor knowing none.
 */
const measureSecrets = Effect.gen(function*() {
  const setup = (known: Readonly<Record<string, string>>) =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry.ToolRegistry
      yield* registry.register({ toolId: "bench.fetch", name: "Fetch", safetyClass: "NETWORK" }, {
        parameters: Schema.Struct({ url: Schema.String }),
        handler: () => Effect.succeed({ url: "https://example.com/", text: page })
      })
      return yield* ToolExecutor.ToolExecutor
    }).pipe(Effect.provide(ToolExecutor.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(
        ToolRegistry.layer,
        ToolPolicy.normal(),
        ApprovalGate.denyAll(),
        EventLog.layerOff,
        ContractBaselineStore.layerNone,
        ToolExecutor.settings("observe"),
        KnownSecrets.layerFrom(known)
      ))
    )))
  const guarded = yield* setup(secrets)
  const plain = yield* setup({})
  const args = { url: "https://example.com/articles/2026/11/a-long-path?with=query&and=more" }
  const time = (executor: ToolExecutor.ToolExecutor["Type"]) =>
    Effect.gen(function*() {
      const start = performance.now()
      for (let i = 0; i < batch; i++) yield* executor.execute("bench.fetch", args)
      return ((performance.now() - start) * 1000) / batch
    })
  yield* time(guarded)
  yield* time(plain)
  const samples: Array<number> = []
  const baseline: Array<number> = []
  for (let i = 0; i < rounds; i++) {
    samples.push(yield* time(guarded))
    baseline.push(yield* time(plain))
  }
  return { samples, baseline }
}).pipe(Effect.provideServiceEffect(RunContext, makeRunContext({ budget: { maxToolCalls: Number.MAX_SAFE_INTEGER } })))

/**
 * An on-disk kern.db in a temporary folder, opened as the runtime opens it (WAL, synchronous NORMAL, every migration):
 * the event log's writes pay what they pay for an agent, not an in-memory database's.
 */
const onDiskEventLog = async <A>(use: (eventLog: Layer.Layer<EventLog.EventLog, unknown>) => Promise<A>): Promise<A> => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-bench-eventlog-"))
  try {
    return await use(EventLog.layerSql.pipe(
      Layer.provide(Layer.merge(Database.layer({ filename: NodePath.join(dir, ".kern", "kern.db") }), KnownSecrets.layerNone))
    ))
  } finally {
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}

export const benches: ReadonlyArray<Bench> = [
  {
    name: "kernel.executor.overhead",
    unit: "µs/call",
    targets: [{ of: "median", atMost: 25 }],
    run: () => Effect.runPromise(measure(EventLog.layerOff))
  },
  {
    // The same with a handler that suspends (the path of MCP, bash and HTTP tools), against a direct call that pays
    // the same suspension: no target of its own, the lens on what the executor adds for work that waits.
    name: "kernel.executor.overhead.async",
    unit: "µs/call",
    run: () => Effect.runPromise(measure(EventLog.layerOff, suspendingHandler))
  },
  {
    name: "kernel.executor.overhead.sqlite-eventlog",
    unit: "µs/call",
    targets: [{ of: "median", atMost: 30 }],
    run: () => onDiskEventLog((eventLog) => Effect.runPromise(measure(eventLog)))
  },
  {
    name: "kernel.executor.secrets.16kb-result",
    unit: "µs/call",
    run: () => Effect.runPromise(measureSecrets)
  }
]
