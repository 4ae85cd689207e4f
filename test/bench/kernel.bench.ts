import { Effect, Layer, Schema } from "effect"
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
import type { Bench } from "./bench.js"

const Args = Schema.Struct({ n: Schema.Number })
const handler = (args: { readonly n: number }) => Effect.succeed(args.n)

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
 * Per-call microseconds: `rounds` samples of `batch` calls each, through the executor and directly. The tool is
 * traced and measured (the spec defaults). The RunContext is provided once around the loop, as one run makes many
 * calls; the agent and the CLI hold theirs and call `executeIn`, which is this same path.
 */
const measure = (eventLog: Layer.Layer<EventLog.EventLog, unknown>) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry.ToolRegistry
    const executor = yield* ToolExecutor.ToolExecutor
    yield* registry.register({ toolId: "bench.noop", name: "Noop", emitMetric: true, emitTrace: true }, {
      parameters: Args,
      handler
    })
    const viaExecutor = executor.execute("bench.noop", { n: 1 })
    const direct = Effect.flatMap(Schema.decodeUnknown(Args)({ n: 1 }), handler)
    const time = (effect: Effect.Effect<unknown, unknown, RunContext>) =>
      Effect.gen(function*() {
        const start = performance.now()
        for (let i = 0; i < batch; i++) yield* effect
        return ((performance.now() - start) * 1000) / batch
      })
    yield* time(viaExecutor)
    yield* time(direct)
    const samples: Array<number> = []
    const baseline: Array<number> = []
    for (let i = 0; i < rounds; i++) {
      samples.push(yield* time(viaExecutor))
      baseline.push(yield* time(direct))
    }
    return { samples, baseline }
  }).pipe(
    Effect.provideServiceEffect(RunContext, makeRunContext({ budget: { maxToolCalls: Number.MAX_SAFE_INTEGER } })),
    Effect.provide(kernel(eventLog))
  )

export const benches: ReadonlyArray<Bench> = [
  {
    name: "kernel.executor.overhead",
    unit: "µs/call",
    run: () => Effect.runPromise(measure(EventLog.layerOff))
  },
  {
    name: "kernel.executor.overhead.sqlite-eventlog",
    unit: "µs/call",
    run: () => Effect.runPromise(measure(EventLog.layerSql.pipe(Layer.provide(Database.layerMemory))))
  }
]
