import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { EventLog } from "../../src/kernel/EventLog.js"
import { RunContext } from "../../src/kernel/RunContext.js"
import { ToolExecutor } from "../../src/kernel/ToolExecutor.js"
import { toolFailure } from "../../src/kernel/ToolFailure.js"
import { ToolRegistry } from "../../src/kernel/ToolRegistry.js"
import { recordingTracer } from "../support/recordingTracer.js"
import { inRun, kernelLayer } from "./harness.js"

describe("emitTrace and the audit log", () => {
  it.effect("emitTrace false turns off spans only: each call, done or failed, is still audited in the EventLog", () => {
    const { spans, tracer } = recordingTracer()
    return Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const executor = yield* ToolExecutor
      yield* registry.register({ toolId: "quiet.ok", name: "Quiet", emitTrace: false }, {
        parameters: Schema.Struct({ n: Schema.Number }),
        handler: ({ n }) => Effect.succeed(n)
      })
      yield* registry.register({ toolId: "quiet.fail", name: "Quiet fail", emitTrace: false }, {
        parameters: Schema.Struct({}),
        handler: () => Effect.fail(toolFailure("NOT_FOUND", "nothing there"))
      })
      const { events, results } = yield* inRun(Effect.gen(function*() {
        const results = yield* Effect.all([
          executor.execute("quiet.ok", { n: 1 }),
          executor.execute("quiet.fail", {}),
          executor.execute("quiet.ok", { n: "one" })
        ])
        const ctx = yield* RunContext
        return { results, events: yield* Effect.flatMap(EventLog, (log) => log.byRun(ctx.runId)) }
      }))
      assert.deepStrictEqual(results.map((r) => r.errorCode ?? "OK"), ["OK", "NOT_FOUND", "VALIDATION_ERROR"])
      assert.deepStrictEqual(events.map((e) => [e.toolId, e.decisionKey, e.status, e.errorCode ?? null]), [
        ["quiet.ok", "kernel.tool.dispatch", "ok", null],
        ["quiet.fail", "kernel.tool.dispatch", "error", "NOT_FOUND"],
        ["quiet.ok", "kernel.tool.dispatch", "error", "VALIDATION_ERROR"]
      ])
      assert.match(events[0]?.argsDigest ?? "", /^sha256:/)
      assert.strictEqual(spans.filter((span) => span.name === "kern.tool.execute").length, 0)
    }).pipe(Effect.provide(Layer.merge(kernelLayer(), Layer.setTracer(tracer))))
  })
})

describe("span parents of a tool registered inside a span", () => {
  /** Registers a tool under a "setup" span, calls it under a "turn" span; returns the spans by name. */
  const registeredInSpan = (emitTrace: boolean) => {
    const { spans, tracer } = recordingTracer()
    return Effect.gen(function*() {
      const registry = yield* ToolRegistry
      yield* registry.register({ toolId: "probe", name: "Probe", emitTrace }, {
        parameters: Schema.Struct({}),
        handler: () => Effect.withSpan(Effect.succeed(1), "handler.work")
      }).pipe(Effect.withSpan("setup"))
      const executor = yield* ToolExecutor
      const result = yield* inRun(executor.execute("probe", {})).pipe(Effect.withSpan("turn"))
      assert.isTrue(result.success)
      const named = (name: string) => spans.find((span) => span.name === name)
      return { named, result }
    }).pipe(Effect.provide(Layer.merge(kernelLayer(), Layer.setTracer(tracer))))
  }

  it.effect("traced: the call's span is a child of the turn's, its attempt's a child of the call's, the handler's spans children of the attempt's", () =>
    Effect.gen(function*() {
      const { named, result } = yield* registeredInSpan(true)
      const call = named("kern.tool.call")
      const attempt = named("kern.tool.execute")
      assert.strictEqual(call?.parentSpanId, named("turn")?.spanId)
      assert.strictEqual(attempt?.parentSpanId, call?.spanId)
      assert.strictEqual(attempt?.spanId, result.spanId)
      assert.strictEqual(named("handler.work")?.parentSpanId, attempt?.spanId)
      assert.strictEqual(attempt?.traceId, named("turn")?.traceId)
      assert.isTrue(call?.ended)
      assert.strictEqual(call?.attributes.get("kern.tool.decision"), "allowed")
      assert.strictEqual(call?.attributes.get("kern.tool.status"), "ok")
    }))

  it.effect("untraced: the handler's spans are children of the turn's, not of the registration's", () =>
    Effect.gen(function*() {
      const { named } = yield* registeredInSpan(false)
      assert.isUndefined(named("kern.tool.execute"))
      assert.isUndefined(named("kern.tool.call"))
      const work = named("handler.work")
      assert.strictEqual(work?.parentSpanId, named("turn")?.spanId)
      assert.notStrictEqual(work?.parentSpanId, named("kern.kernel.registry.register")?.spanId)
      assert.strictEqual(work?.traceId, named("turn")?.traceId)
    }))
})
