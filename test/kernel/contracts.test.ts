import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Ref, Schema } from "effect"
import fc from "fast-check"
import { ToolSpec } from "../../src/kernel/contracts.js"
import { canonicalJson, contractFingerprint } from "../../src/kernel/fingerprint.js"
import { makeSpec, ToolRegistry } from "../../src/kernel/ToolRegistry.js"
import { inRun, kernelLayer } from "./harness.js"
import { ToolExecutor } from "../../src/kernel/ToolExecutor.js"

const spec = (input: typeof ToolSpec.Encoded) => Schema.decodeUnknownSync(ToolSpec)(input)

const fullSpec = {
  toolId: "vault.write",
  name: "Vault write",
  description: "Writes a note",
  safetyClass: "LOCAL_WRITE",
  idempotent: false,
  argsSchema: [{ name: "path", type: "string", description: "Vault path" }, { name: "content", type: "string" }],
  returnsSchema: { type: "object", description: "Written" },
  requiresPermission: ["vault.write"],
  allowlistedAgents: ["atlas"],
  sideEffectLevel: "local_write",
  requiredIdentityScopes: ["user"],
  riskTags: ["fs"]
} as const

describe("ToolSpec", () => {
  it("has the seed's defaults", () => {
    const s = spec({ toolId: "myagent.do_thing", name: "Do Thing" })
    assert.strictEqual(s.description, "")
    assert.strictEqual(s.safetyClass, "READ_ONLY")
    assert.isTrue(s.idempotent)
    assert.strictEqual(s.maxRetries, 2)
    assert.strictEqual(s.timeoutMs, 5000)
    assert.isTrue(s.emitTrace)
    assert.isTrue(s.emitMetric)
    assert.deepStrictEqual([...s.allowlistedAgents], [])
    assert.strictEqual(s.sideEffectLevel, "none")
  })

  const invalid: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
    ["toolId", { toolId: "Bad Id", name: "x" }, "toolId"],
    ["toolId", { toolId: "a", name: "x" }, "toolId"],
    ["name", { toolId: "ok.tool", name: " " }, "name"],
    ["maxRetries", { toolId: "ok.tool", name: "x", maxRetries: 6 }, "maxRetries"],
    ["timeoutMs", { toolId: "ok.tool", name: "x", timeoutMs: 99 }, "timeoutMs"],
    ["timeoutMs", { toolId: "ok.tool", name: "x", timeoutMs: 60_001 }, "timeoutMs"],
    ["safetyClass", { toolId: "ok.tool", name: "x", safetyClass: "SCARY" }, "safetyClass"],
    ["argsSchema", { toolId: "ok.tool", name: "x", argsSchema: [{ name: "a", type: "date" }] }, "argsSchema.0.type"]
  ]
  for (const [label, input, field] of invalid) {
    it(`an invalid ${label} is refused at registration with the field named`, () => {
      const result = makeSpec(input as typeof ToolSpec.Encoded)
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) {
        assert.strictEqual(result.left.field, field)
        assert.include(result.left.message, field)
      }
    })
  }
})

describe("contract fingerprints", () => {
  // Changed deliberately when the fingerprint came to cover the arguments' full JSON Schema (issue 9).
  it("matches fixed vectors (a change to the canonical form must be deliberate)", () => {
    assert.strictEqual(
      contractFingerprint(spec({ toolId: "myagent.do_thing", name: "Do Thing" })),
      "sha256:f6d5189a01e8a4d4d87f7c8c7b97737c67482b299953570154e6634f0f4f260d"
    )
    assert.strictEqual(
      contractFingerprint(spec(fullSpec)),
      "sha256:b979a7600e48885174ea70d73edf5afbbb7467f8881a99771dbfc99e3b73b916"
    )
    assert.strictEqual(canonicalJson({ b: 1, a: [{ d: null, c: "x" }] }), "{\"a\":[{\"c\":\"x\",\"d\":null}],\"b\":1}")
  })

  it("does not depend on key order", () => {
    const reversed = Object.fromEntries(Object.entries(fullSpec).reverse()) as unknown as typeof ToolSpec.Encoded
    assert.strictEqual(contractFingerprint(spec(reversed)), contractFingerprint(spec(fullSpec)))
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (record) => {
        const shuffled = Object.fromEntries(Object.entries(record).reverse())
        return canonicalJson(record) === canonicalJson(shuffled)
      })
    )
  })

  it("covers governed fields and ignores runtime ones", () => {
    const base = contractFingerprint(spec(fullSpec))
    for (const change of [{ description: "Writes a page" }, { safetyClass: "NETWORK" }, { riskTags: ["fs", "net"] }, { allowlistedAgents: [] }]) {
      assert.notStrictEqual(contractFingerprint(spec({ ...fullSpec, ...change } as typeof ToolSpec.Encoded)), base)
    }
    for (const change of [{ timeoutMs: 9000 }, { maxRetries: 0 }, { emitTrace: false }, { emitMetric: false }]) {
      assert.strictEqual(contractFingerprint(spec({ ...fullSpec, ...change } as typeof ToolSpec.Encoded)), base)
    }
  })
})

describe("ToolRegistry", () => {
  it.effect("lists sorted, filters by safety and agent, counts, and refuses duplicates", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const noop = () => Effect.void
      yield* registry.registerFn({ toolId: "z.read", name: "Z" }, noop)
      yield* registry.registerFn({ toolId: "a.write", name: "A", safetyClass: "LOCAL_WRITE" }, noop)
      yield* registry.registerFn({ toolId: "m.net", name: "M", safetyClass: "NETWORK", allowlistedAgents: ["atlas"] }, noop)
      assert.deepStrictEqual(yield* registry.listIds, ["a.write", "m.net", "z.read"])
      assert.deepStrictEqual((yield* registry.filterBySafety("READ_ONLY")).map((s) => s.toolId), ["z.read"])
      assert.deepStrictEqual((yield* registry.filterBySafety("LOCAL_WRITE")).map((s) => s.toolId), ["a.write", "z.read"])
      assert.deepStrictEqual((yield* registry.filterForAgent("atlas")).map((s) => s.toolId), ["a.write", "m.net", "z.read"])
      assert.deepStrictEqual((yield* registry.filterForAgent("hermes")).map((s) => s.toolId), ["a.write", "z.read"])
      assert.strictEqual(yield* registry.size, 3)
      assert.isTrue(yield* registry.has("m.net"))
      assert.isFalse(yield* registry.has("nope"))
      const duplicate = yield* Effect.flip(registry.registerFn({ toolId: "z.read", name: "Z2" }, noop))
      assert.include(duplicate.message, "already registered")
      const invalid = yield* Effect.flip(registry.registerFn({ toolId: "x.y", name: "X", timeoutMs: 10 }, noop))
      assert.strictEqual(invalid.field, "timeoutMs")
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("records the fingerprint at registration; an Effect Schema yields the argument declarations", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const tool = yield* registry.register({ toolId: "notes.add", name: "Add note" }, {
        parameters: Schema.Struct({
          text: Schema.String.annotations({ description: "the note" }),
          pinned: Schema.optional(Schema.Boolean)
        }),
        handler: () => Effect.void
      })
      assert.strictEqual(tool.registeredFingerprint, contractFingerprint(tool.spec))
      assert.deepStrictEqual(tool.spec.argsSchema.map((arg) => [arg.name, arg.type, arg.required, arg.description]), [
        ["text", "string", true, "the note"],
        ["pinned", "boolean", false, ""]
      ])
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("registerFn decodes arguments from the declared argsSchema", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<unknown>(null)
      const registry = yield* ToolRegistry
      yield* registry.registerFn({
        toolId: "calc.add",
        name: "Add",
        argsSchema: [{ name: "a", type: "integer" }, { name: "b", type: "number", required: false }]
      }, (args) => Ref.set(seen, args))
      const executor = yield* ToolExecutor
      const ok = yield* inRun(executor.execute("calc.add", { a: 2, b: 0.5 }))
      assert.isTrue(ok.success)
      assert.deepStrictEqual(yield* Ref.get(seen), { a: 2, b: 0.5 })
      const bad = yield* inRun(executor.execute("calc.add", { a: 2.5 }))
      assert.strictEqual(bad.errorCode, "VALIDATION_ERROR")
    }).pipe(Effect.provide(kernelLayer())))
})
