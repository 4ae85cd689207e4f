import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref, Schema } from "effect"
import fc from "fast-check"
import { rawArgumentsKey, toolCallParams } from "../../src/kernel/toolArgs.js"
import { ToolExecutor } from "../../src/kernel/ToolExecutor.js"
import { ToolRegistry } from "../../src/kernel/ToolRegistry.js"
import { inRun, kernelLayer } from "./harness.js"

const OpsArgs = Schema.Struct({
  action: Schema.Literal("status", "restart"),
  target: Schema.String.pipe(Schema.pattern(/^[a-z]+$/)),
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 50))),
  options: Schema.optional(Schema.Struct({ depth: Schema.Int, tags: Schema.Array(Schema.String) }))
})

/** The VALIDATION_ERROR message for `args` given to a tool taking OpsArgs, and how many times its handler ran. */
const messageFor = (args: unknown, parameters: Schema.Schema<unknown, unknown> = OpsArgs as Schema.Schema<unknown, unknown>) =>
  Effect.gen(function*() {
    const runs = yield* Ref.make(0)
    const registry = yield* ToolRegistry
    yield* registry.register({ toolId: "ops.run", name: "Run" }, { parameters, handler: () => Ref.update(runs, (n) => n + 1) })
    const executor = yield* ToolExecutor
    const result = yield* inRun(executor.execute("ops.run", args))
    assert.strictEqual(result.errorCode, "VALIDATION_ERROR")
    assert.strictEqual(yield* Ref.get(runs), 0, "the handler never runs")
    const message = result.errorMessage ?? ""
    assert.isAtMost(message.split("\n").length, 2, message)
    assert.notInclude(message, "└─")
    return message
  }).pipe(Effect.provide(kernelLayer()))

describe("VALIDATION_ERROR messages name the field, what was expected and what came", () => {
  it.effect("a value outside a literal names the allowed values", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* messageFor({ action: "delete_everything", target: "db" }),
        "invalid arguments for ops.run: action: expected \"status\" | \"restart\", got \"delete_everything\""
      )
    }))

  it.effect("a pattern, a bound and a nested field are named by their path", () =>
    Effect.gen(function*() {
      const message = yield* messageFor({ action: "status", target: "DB!", limit: 99, options: { depth: 1.5, tags: ["a", 2] } })
      assert.include(message, "target: expected string (matching ^[a-z]+$), got \"DB!\"")
      assert.include(message, "limit: expected integer >= 1 and <= 50, got 99")
      assert.include(message, "options.depth: expected integer, got 1.5")
      assert.include(message, "and 1 more")
    }))

  it.effect("missing fields say what they expect; unknown fields list the real ones", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* messageFor({ target: "db" }),
        "invalid arguments for ops.run: action: missing, expected \"status\" | \"restart\""
      )
      assert.strictEqual(
        yield* messageFor({ action: "status", target: "db", force: true }),
        "invalid arguments for ops.run: force: not an argument of this tool (it takes action, target, limit, options)"
      )
    }))

  it.effect("arguments that are not an object get a second line with the expected shape", () =>
    Effect.gen(function*() {
      const message = yield* messageFor(["status"])
      assert.strictEqual(
        message,
        "invalid arguments for ops.run: the arguments are an array, not an object: [\"status\"]\n" +
          "expected a JSON object {action: \"status\" | \"restart\", target: string (matching ^[a-z]+$), " +
          "limit?: integer >= 1 and <= 50, options?: {depth: integer, tags: array of string}}"
      )
    }))

  it.effect("text the model sent that is not JSON is quoted, with the parser's reason", () =>
    Effect.gen(function*() {
      const message = yield* messageFor(toolCallParams("{\"action\": \"status\""))
      assert.match(message, /^invalid arguments for ops\.run: the arguments are not valid JSON \(.+\): \{"action": "status"\n/)
    }))

  it.effect("the model's unparsed arguments never reach a handler, even one whose schema takes anything", () =>
    Effect.gen(function*() {
      const message = yield* messageFor({ [rawArgumentsKey]: "oops" }, Schema.Unknown)
      assert.include(message, "the arguments are not valid JSON")
    }))

  it.effect("whatever JSON comes, a call either runs or answers one or two lines (fast-check)", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      yield* registry.register({ toolId: "ops.run", name: "Run" }, {
        parameters: OpsArgs as Schema.Schema<unknown, unknown>,
        handler: () => Effect.succeed("ran")
      })
      const executor = yield* ToolExecutor
      const samples = fc.sample(
        fc.oneof(
          fc.jsonValue(),
          fc.record({ action: fc.oneof(fc.constant("status"), fc.string()), target: fc.jsonValue(), limit: fc.jsonValue() }),
          fc.string().map(toolCallParams)
        ),
        { numRuns: 300, seed: 9 }
      )
      for (const args of samples) {
        const result = yield* inRun(executor.execute("ops.run", args))
        if (result.success) continue
        assert.strictEqual(result.errorCode, "VALIDATION_ERROR", JSON.stringify(args))
        assert.match(result.errorMessage ?? "", /^invalid arguments for ops\.run: /)
        assert.isAtMost((result.errorMessage ?? "").split("\n").length, 2, JSON.stringify(args))
      }
    }).pipe(Effect.provide(kernelLayer())))
})
