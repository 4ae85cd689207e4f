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
 * Per-call microseconds: `rounds` samples of `batch` calls each, through the executor and directly, with the CPU time
 * per call of each reported beside (`cpuUs`, `baselineCpuUs`; the process's, SQLite's and GC's included). The tool is
 * traced and measured (the spec defaults). The RunContext is provided once around the loop, as one run makes many
 * calls; the agent and the CLI hold theirs and call `executeIn`, which is this same path.
 */
const measure = (eventLog: Layer.Layer<EventLog.EventLog, unknown>, handler: Handler = noopHandler) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry.ToolRegistry
    const executor = yield* ToolExecutor.ToolExecutor
    yield* registry.register({ toolId: "bench.noop", name: "Noop", emitMetric: true, emitTrace: true }, {
      parameters: Args,
      handler
    })
    const viaExecutor = executor.execute("bench.noop", { n: 1 })
    const direct = Effect.flatMap(Schema.decodeUnknown(Args)({ n: 1 }), handler)
    const cpu: Array<number> = []
    const baselineCpu: Array<number> = []
    const time = (effect: Effect.Effect<unknown, unknown, RunContext>, cpuInto?: Array<number>) =>
      Effect.gen(function*() {
        const start = performance.now()
        const cpuStart = process.cpuUsage()
        for (let i = 0; i < batch; i++) yield* effect
        const used = process.cpuUsage(cpuStart)
        cpuInto?.push((used.user + used.system) / batch)
        return ((performance.now() - start) * 1000) / batch
      })
    yield* time(viaExecutor)
    yield* time(direct)
    const samples: Array<number> = []
    const baseline: Array<number> = []
    for (let i = 0; i < rounds; i++) {
      samples.push(yield* time(viaExecutor, cpu))
      baseline.push(yield* time(direct, baselineCpu))
    }
    // Every call's event reached kern.db: the figure is not bought by dropping audit writes.
    const log = yield* EventLog.EventLog
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
        overheadCpuUs: over(cpu, baselineCpu)
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
