import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as ContractBaselineStore from "../../src/kernel/ContractBaselineStore.js"
import { ToolSpec } from "../../src/kernel/contracts.js"
import { contractFingerprint } from "../../src/kernel/fingerprint.js"
import { ToolExecutor } from "../../src/kernel/ToolExecutor.js"
import { ToolRegistry } from "../../src/kernel/ToolRegistry.js"
import * as Database from "../../src/storage/Database.js"
import { inRun, kernelLayer } from "./harness.js"

/** The fingerprint a tool with these argument Schemas gets when it is registered (the real path). */
const fingerprintOf = (parameters: Schema.Schema.AnyNoContext) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const tool = yield* registry.register(
      { toolId: "ops.run", name: "Run", description: "Runs an operation", safetyClass: "LOCAL_WRITE" },
      { parameters: parameters as Schema.Schema<unknown, unknown>, handler: () => Effect.void }
    )
    return tool.fingerprint
  }).pipe(Effect.provide(kernelLayer()))

const Action = Schema.Literal("status", "restart")

/** Pairs of argument Schemas a model would have to call differently: each must change the fingerprint. */
const drifts: ReadonlyArray<readonly [string, Schema.Schema.AnyNoContext, Schema.Schema.AnyNoContext]> = [
  [
    "a new literal value",
    Schema.Struct({ action: Action }),
    Schema.Struct({ action: Schema.Literal("status", "restart", "delete_everything") })
  ],
  [
    "a pattern",
    Schema.Struct({ path: Schema.String }),
    Schema.Struct({ path: Schema.String.pipe(Schema.pattern(/^notes\//)) })
  ],
  [
    "integer for number, nested",
    Schema.Struct({ options: Schema.Struct({ depth: Schema.Number }) }),
    Schema.Struct({ options: Schema.Struct({ depth: Schema.Int }) })
  ],
  [
    "integer for number",
    Schema.Struct({ depth: Schema.Number }),
    Schema.Struct({ depth: Schema.Int })
  ],
  [
    "a nested field",
    Schema.Struct({ options: Schema.Struct({ force: Schema.Boolean }) }),
    Schema.Struct({ options: Schema.Struct({ force: Schema.Boolean, recursive: Schema.Boolean }) })
  ],
  [
    "a nested field becoming required",
    Schema.Struct({ options: Schema.Struct({ force: Schema.optional(Schema.Boolean) }) }),
    Schema.Struct({ options: Schema.Struct({ force: Schema.Boolean }) })
  ],
  [
    "array items",
    Schema.Struct({ targets: Schema.Array(Schema.String) }),
    Schema.Struct({ targets: Schema.Array(Schema.Struct({ host: Schema.String })) })
  ],
  [
    "bounds",
    Schema.Struct({ limit: Schema.Int.pipe(Schema.between(1, 50)) }),
    Schema.Struct({ limit: Schema.Int.pipe(Schema.between(1, 5000)) })
  ],
  [
    // Seed 002 puts descriptions in the contract: the model reads them to decide how to call the tool.
    "an argument's description",
    Schema.Struct({ path: Schema.String.annotations({ description: "a note to read" }) }),
    Schema.Struct({ path: Schema.String.annotations({ description: "a note to read, then delete" }) })
  ]
]

/** Pairs that are the same contract written differently: the fingerprint must not move. */
const sameContract: ReadonlyArray<readonly [string, Schema.Schema.AnyNoContext, Schema.Schema.AnyNoContext]> = [
  [
    "field order",
    Schema.Struct({ path: Schema.String, limit: Schema.Int, mode: Action }),
    Schema.Struct({ mode: Action, limit: Schema.Int, path: Schema.String })
  ],
  [
    "literal order",
    Schema.Struct({ action: Schema.Literal("status", "restart") }),
    Schema.Struct({ action: Schema.Literal("restart", "status") })
  ],
  [
    "a schema identifier (only names the $defs entry)",
    Schema.Struct({ path: Schema.String.annotations({ identifier: "NotePath" }) }),
    Schema.Struct({ path: Schema.String.annotations({ identifier: "FilePath" }) })
  ]
]

describe("contract fingerprint over the arguments' full JSON Schema", () => {
  for (const [what, before, after] of drifts) {
    it.effect(`changes with ${what}`, () =>
      Effect.gen(function*() {
        assert.notStrictEqual(yield* fingerprintOf(before), yield* fingerprintOf(after))
      }))
  }
  for (const [what, before, after] of sameContract) {
    it.effect(`does not change with ${what}`, () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* fingerprintOf(before), yield* fingerprintOf(after))
      }))
  }

  it.effect("a spec decoded outside the registry has the fingerprint of the same spec registered", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const input = {
        toolId: "calc.add",
        name: "Add",
        argsSchema: [{ name: "a", type: "integer" as const }, { name: "b", type: "number" as const, required: false }]
      }
      const registered = yield* registry.registerFn(input, () => Effect.void)
      assert.strictEqual(contractFingerprint(Schema.decodeUnknownSync(ToolSpec)(input)), registered.fingerprint)
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("a literal added between two runs is drift: the baseline reports it and enforce refuses the tool", () =>
    Effect.gen(function*() {
      const store = yield* ContractBaselineStore.ContractBaselineStore
      // Two "processes" over one kern.db: each registers the tool as its code says.
      const process = <A, E>(
        action: Schema.Schema.AnyNoContext,
        body: Effect.Effect<A, E, ToolRegistry | ToolExecutor>
      ) =>
        Effect.gen(function*() {
          const registry = yield* ToolRegistry
          yield* registry.register({ toolId: "ops.run", name: "Run", safetyClass: "LOCAL_WRITE" }, {
            parameters: Schema.Struct({ action }) as Schema.Schema<unknown, unknown>,
            handler: () => Effect.succeed("ran")
          })
          return yield* body
        }).pipe(Effect.provide(kernelLayer({
          enforcement: "enforce",
          baselines: Layer.succeed(ContractBaselineStore.ContractBaselineStore, store)
        })))
      yield* process(Action, Effect.flatMap(ToolRegistry, (registry) =>
        Effect.flatMap(registry.listAll, (specs) => store.snapshot("kernel", specs, "operator"))))
      const { mismatches, result } = yield* process(
        Schema.Literal("status", "restart", "delete_everything"),
        Effect.gen(function*() {
          const registry = yield* ToolRegistry
          const executor = yield* ToolExecutor
          return {
            mismatches: yield* store.mismatches("kernel", yield* registry.listAll),
            result: yield* inRun(executor.execute("ops.run", { action: "status" }))
          }
        })
      )
      assert.deepStrictEqual(mismatches.map((m) => [m.toolId, m.kind]), [["ops.run", "changed"]])
      assert.strictEqual(result.errorCode, "PERMISSION_DENIED")
      assert.include(result.errorMessage, "changed from the approved baseline")
    }).pipe(Effect.provide(ContractBaselineStore.layerSql.pipe(Layer.provide(Database.layer({ filename: ":memory:" }))))))
})
