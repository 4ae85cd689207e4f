// An Effect app with its own tool registry and executor, built from kern's kernel layers.
// Run with: npx tsx scratchpad/embed-kernel.ts
import { Console, Effect, Layer, Schema } from "effect"
import { ApprovalGate, ContractBaselineStore, EventLog, KnownSecrets, makeRunContext, RunContext, ToolExecutor, ToolPolicy, ToolRegistry } from "../src/index.js"

const KernelLive = ToolExecutor.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(
    ToolRegistry.layer,
    ToolPolicy.normal({ blockedTools: ["shell.rm"] }),
    ApprovalGate.denyAll(),
    EventLog.layerMemory,
    ContractBaselineStore.layerNone,
    ToolExecutor.settings("observe"),
    // The secrets the executor keeps out of risky arguments and out of results: this app has none.
    KnownSecrets.layerNone
  ))
)

const program = Effect.gen(function*() {
  const registry = yield* ToolRegistry.ToolRegistry
  yield* registry.register(
    { toolId: "math.add", name: "Add", description: "Adds two numbers" },
    {
      parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
      handler: ({ a, b }) => Effect.succeed({ sum: a + b })
    }
  )
  const executor = yield* ToolExecutor.ToolExecutor
  const ctx = yield* makeRunContext({ agentName: "demo", intent: "add numbers" })
  const ok = yield* executor.execute("math.add", { a: 2, b: 3 }).pipe(Effect.provideService(RunContext, ctx))
  const bad = yield* executor.execute("math.add", { a: "two" }).pipe(Effect.provideService(RunContext, ctx))
  yield* Console.log(ok.data, bad.errorCode, bad.errorMessage)
  const events = yield* Effect.flatMap(EventLog.EventLog, (log) => log.byRun(ctx.runId))
  yield* Console.log(`${events.length} events recorded for ${ctx.runId}`)
})

Effect.runPromise(program.pipe(Effect.provide(KernelLive)))
