import { Tool } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { modelToolName, toolkitFor } from "../../src/kernel/aiTools.js"
import { rawArgumentsKey } from "../../src/kernel/toolArgs.js"
import { ToolRegistry } from "../../src/kernel/ToolRegistry.js"
import { kernelLayer } from "./harness.js"
import { builtinTools } from "../../src/tools/builtins.js"

describe("tools as @effect/ai tools", () => {
  it.effect("keep the argument JSON Schema for the model, decode anything, and map dotted ids", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const tool = yield* registry.register({ toolId: "notes.search", name: "Search", description: "Search notes" }, {
        parameters: Schema.Struct({
          query: Schema.String.annotations({ description: "what to look for" }),
          limit: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 50)), { default: () => 5 }),
          mode: Schema.Literal("fast", "deep")
        }),
        handler: () => Effect.void
      })
      const { toolIdOf, toolkit } = toolkitFor([tool])
      const aiTool = toolkit.tools["notes__search"]
      assert.isDefined(aiTool)
      const json = Tool.getJsonSchema(aiTool!) as {
        properties: Record<string, { type?: string; enum?: Array<string>; description?: string }>
        required: Array<string>
      }
      assert.strictEqual(json.properties["query"]?.type, "string")
      assert.strictEqual(json.properties["query"]?.description, "what to look for")
      assert.strictEqual(json.properties["limit"]?.type, "integer")
      assert.deepStrictEqual(json.properties["mode"]?.enum, ["fast", "deep"])
      assert.deepStrictEqual(json.required.sort(), ["mode", "query"])
      assert.strictEqual(aiTool!.description, "Search notes")
      // Wrong arguments still decode here; the executor reports them to the model.
      const decode = Schema.decodeUnknownSync(aiTool!.parametersSchema as unknown as Schema.Schema<unknown>)
      assert.deepStrictEqual(decode({ query: 42, mode: "slow" }), { query: 42, mode: "slow" })
      // Arguments that were not an object travel under a key the model is never shown.
      assert.deepStrictEqual(decode({ [rawArgumentsKey]: "{\"query\": " }), {
        query: undefined,
        mode: undefined,
        [rawArgumentsKey]: "{\"query\": "
      })
      assert.notInclude(JSON.stringify(json), rawArgumentsKey)
      assert.strictEqual(toolIdOf("notes__search"), "notes.search")
      assert.strictEqual(modelToolName("read"), "read")
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("every built-in tool shows the model a flat JSON Schema (no $ref)", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const tools = yield* Effect.forEach(builtinTools, (builtin) =>
        registry.register({ toolId: builtin.metadata.toolId, name: builtin.metadata.name }, {
          parameters: builtin.parameters as Schema.Schema<unknown, unknown>,
          handler: () => Effect.void
        }))
      const { toolkit } = toolkitFor(tools)
      for (const tool of Object.values(toolkit.tools)) {
        const json = JSON.stringify(Tool.getJsonSchema(tool))
        assert.notInclude(json, "$ref", tool.name)
        assert.include(json, "\"type\":\"object\"", tool.name)
      }
      assert.strictEqual(Object.keys(toolkit.tools).length, 18)
    }).pipe(Effect.provide(kernelLayer())))
})
