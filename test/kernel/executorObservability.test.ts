import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Logger, LogLevel, Metric, MetricLabel, Option, Random, Schema, Scope, TestClock, Tracer } from "effect"
import * as ApprovalGate from "../../src/kernel/ApprovalGate.js"
import { makeRunContext, RunContext } from "../../src/kernel/RunContext.js"
import { ToolExecutor } from "../../src/kernel/ToolExecutor.js"
import { toolFailure } from "../../src/kernel/ToolFailure.js"
import { ToolRegistry } from "../../src/kernel/ToolRegistry.js"
import { toolCalls as toolCallsMetric, toolLatency } from "../../src/kernel/toolMetrics.js"
import { recordingTracer } from "../support/recordingTracer.js"
import { inRun, kernelLayer } from "./harness.js"

class Greeting extends Context.Tag("test/Greeting")<Greeting, string>() {}

const execute = (toolId: string, args: unknown) => Effect.flatMap(ToolExecutor, (executor) => executor.execute(toolId, args))

const toolCalls = (tool: string, status: string) =>
  Metric.value(
    Metric.taggedWithLabels(toolCallsMetric, [
      MetricLabel.make("tool", tool),
      MetricLabel.make("status", status)
    ])
  ).pipe(Effect.map((state) => state.count))

const latencyCount = (tool: string) =>
  Metric.value(Metric.tagged(toolLatency, "tool", tool)).pipe(
    Effect.map((state) => state.count)
  )

describe("ToolExecutor observability", () => {
  it.effect("each attempt runs in a kern.tool.execute span with tool, run and attempt; the result carries its id", () => {
    const { spans, tracer } = recordingTracer()
    return Effect.gen(function*() {
      const registry = yield* ToolRegistry
      let attempts = 0
      yield* registry.register({ toolId: "traced.net", name: "Traced", maxRetries: 2 }, {
        parameters: Schema.Struct({}),
        handler: () =>
          Effect.suspend(() =>
            ++attempts === 1
              ? Effect.fail(toolFailure("NETWORK_ERROR", "blip", true))
              : Effect.withSpan(Effect.succeed("ok"), "inner.work")
          )
      })
      const ctx = yield* makeRunContext()
      const fiber = yield* Effect.fork(Effect.provideService(execute("traced.net", {}), RunContext, ctx))
      yield* TestClock.adjust("10 seconds")
      const result = yield* Fiber.join(fiber)
      assert.isTrue(result.success)
      const attemptsTraced = spans.filter((span) => span.name === "kern.tool.execute")
      assert.deepStrictEqual(attemptsTraced.map((span) => span.attributes.get("kern.tool.attempt")), [1, 2])
      for (const span of attemptsTraced) {
        assert.strictEqual(span.attributes.get("kern.tool.id"), "traced.net")
        assert.strictEqual(span.attributes.get("kern.run.id"), ctx.runId)
        assert.isTrue(span.ended)
      }
      // The handler's own spans are children of the attempt's span; the result names the last attempt's.
      const inner = spans.find((span) => span.name === "inner.work")
      assert.strictEqual(inner?.parentSpanId, attemptsTraced[1]?.spanId)
      assert.strictEqual(result.spanId, attemptsTraced[1]?.spanId)
      assert.strictEqual(result.callId, `call_${attemptsTraced[1]?.spanId}`)
    }).pipe(Effect.provide(Layer.merge(kernelLayer(), Layer.setTracer(tracer))))
  })

  it.effect("a tool with emitTrace false makes no span and still gets a call id", () => {
    const { spans, tracer } = recordingTracer()
    return Effect.gen(function*() {
      const registry = yield* ToolRegistry
      yield* registry.register({ toolId: "quiet.tool", name: "Quiet", emitTrace: false }, {
        parameters: Schema.Struct({}),
        handler: () => Effect.succeed(1)
      })
      const result = yield* inRun(execute("quiet.tool", {}))
      assert.isTrue(result.success)
      assert.match(result.callId, /^call_[0-9a-f]{16}$/)
      assert.strictEqual(spans.filter((span) => span.name === "kern.tool.execute").length, 0)
    }).pipe(Effect.provide(Layer.merge(kernelLayer(), Layer.setTracer(tracer))))
  })

  it.effect("counts calls by tool and status and observes latency; refusals are counted without a latency", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      yield* registry.register({ toolId: "metered.tool", name: "Metered" }, {
        parameters: Schema.Struct({ fail: Schema.Boolean }),
        handler: ({ fail }) => (fail ? Effect.fail(toolFailure("NETWORK_ERROR", "down")) : Effect.succeed("ok"))
      })
      const before = {
        ok: yield* toolCalls("metered.tool", "OK"),
        failed: yield* toolCalls("metered.tool", "NETWORK_ERROR"),
        refused: yield* toolCalls("metered.tool", "BUDGET_EXCEEDED"),
        latency: yield* latencyCount("metered.tool")
      }
      yield* inRun(execute("metered.tool", { fail: false }))
      yield* inRun(execute("metered.tool", { fail: false }))
      yield* inRun(execute("metered.tool", { fail: true }))
      yield* inRun(execute("metered.tool", { fail: false }), { budget: { maxToolCalls: 0 } })
      assert.strictEqual((yield* toolCalls("metered.tool", "OK")) - before.ok, 2)
      assert.strictEqual((yield* toolCalls("metered.tool", "NETWORK_ERROR")) - before.failed, 1)
      assert.strictEqual((yield* toolCalls("metered.tool", "BUDGET_EXCEEDED")) - before.refused, 1)
      assert.strictEqual((yield* latencyCount("metered.tool")) - before.latency, 3)
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("labels added with Effect.tagMetrics are kept on the executor's metrics", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      yield* registry.register({ toolId: "tagged.tool", name: "Tagged" }, {
        parameters: Schema.Struct({}),
        handler: () => Effect.succeed("ok")
      })
      yield* inRun(execute("tagged.tool", {})).pipe(Effect.tagMetrics("agent", "scout"))
      const tagged = yield* Metric.value(
        Metric.taggedWithLabels(toolCallsMetric, [
          MetricLabel.make("agent", "scout"),
          MetricLabel.make("tool", "tagged.tool"),
          MetricLabel.make("status", "OK")
        ])
      )
      assert.strictEqual(tagged.count, 1)
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("a call's id is drawn from the fiber's Random: a seeded one gives the same ids run after run", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      yield* registry.register({ toolId: "seeded.tool", name: "Seeded", emitTrace: false }, {
        parameters: Schema.Struct({}),
        handler: () => Effect.succeed(1)
      })
      // A fresh Random of the same seed for each run.
      const ids = Effect.suspend(() =>
        Effect.withRandom(
          Effect.map(Effect.all([inRun(execute("seeded.tool", {})), inRun(execute("seeded.tool", {}))]), (results) =>
            results.map((result) => result.callId)),
          Random.make("kern")
        ))
      const first = yield* ids
      assert.deepStrictEqual(yield* ids, first)
      assert.notStrictEqual(first[0], first[1])
      for (const id of first) assert.match(id, /^call_[0-9a-f]{16}$/)
      // Effect's own Random: ids drawn at once, still of the same shape and not repeated.
      const unseeded = yield* Effect.all([inRun(execute("seeded.tool", {})), inRun(execute("seeded.tool", {}))])
      assert.notStrictEqual(unseeded[0].callId, unseeded[1].callId)
      for (const result of unseeded) assert.match(result.callId, /^call_[0-9a-f]{16}$/)
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("a call's log line follows the calling fiber's minimum log level: a call that went through is a debug line", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      yield* registry.register({ toolId: "logged.tool", name: "Logged" }, {
        parameters: Schema.Struct({}),
        handler: () => Effect.succeed(1)
      })
      const lines: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        lines.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
      })
      const logged = (effect: Effect.Effect<unknown, never, ToolExecutor | ToolRegistry>) =>
        effect.pipe(Effect.provide(Logger.add(logger)))
      yield* logged(inRun(execute("logged.tool", {})))
      assert.deepStrictEqual(lines, [])
      yield* logged(inRun(execute("logged.tool", {})).pipe(Logger.withMinimumLogLevel(LogLevel.Debug)))
      assert.strictEqual(lines.length, 1)
      assert.match(lines[0]!, /^DEBUG tool logged\.tool ok in \d+ ms$/)
      yield* logged(inRun(execute("missing.tool", {})))
      assert.strictEqual(lines.length, 2)
      assert.match(lines[1]!, /^INFO tool missing\.tool refused in \d+ ms: unknown tool/)
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("executeIn runs a call for a run context held by the caller, with nothing to provide", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const executor = yield* ToolExecutor
      yield* registry.register({ toolId: "run.reader", name: "Run reader" }, {
        parameters: Schema.Struct({}),
        handler: () => Effect.map(RunContext, (run) => run.runId)
      })
      const ctx = yield* makeRunContext({ budget: { maxToolCalls: 1 } })
      const first = yield* executor.executeIn(ctx, "run.reader", {})
      assert.strictEqual(first.data, ctx.runId)
      assert.strictEqual(first.traceId, ctx.traceId)
      // The budget is the run's: a second call is refused.
      const second = yield* executor.executeIn(ctx, "run.reader", {})
      assert.strictEqual(second.errorCode, "BUDGET_EXCEEDED")
    }).pipe(Effect.provide(kernelLayer())))

  const registerProbe = Effect.flatMap(ToolRegistry, (registry) =>
    registry.register({ toolId: "services.probe", name: "Probe" }, {
      parameters: Schema.Struct({}),
      handler: () =>
        Effect.gen(function*() {
          const greeting = yield* Greeting
          const run = yield* RunContext
          const scope = yield* Scope.Scope
          const span = yield* Effect.serviceOption(Tracer.ParentSpan)
          return { greeting, runId: run.runId, scoped: scope !== undefined, span: Option.map(span, (s) => s.spanId) }
        })
    }).pipe(Effect.provideService(Greeting, "hello")))

  it.effect("a handler sees the services captured at registration, the run, its own Scope and its span", () => {
    const { spans, tracer } = recordingTracer()
    return Effect.gen(function*() {
      yield* registerProbe
      const ctx = yield* makeRunContext()
      const result = yield* Effect.provideService(execute("services.probe", {}), RunContext, ctx)
      assert.deepStrictEqual(result.data, { greeting: "hello", runId: ctx.runId, scoped: true, span: Option.some(result.spanId) })
      assert.deepStrictEqual(spans.map((span) => span.name).filter((name) => name.startsWith("kern.tool.")), ["kern.tool.call", "kern.tool.execute"])
    }).pipe(Effect.provide(Layer.merge(kernelLayer(), Layer.setTracer(tracer))))
  })

  it.effect("with Effect's own tracer (no exporter), a call makes no span: its handler is under the caller's span, its ids are span-shaped", () =>
    Effect.gen(function*() {
      yield* registerProbe
      const ctx = yield* makeRunContext()
      const caller = yield* Effect.makeSpan("caller")
      const result = yield* execute("services.probe", {}).pipe(Effect.provideService(RunContext, ctx), Effect.withParentSpan(caller))
      // A span made for the call would be the handler's parent; the caller's is.
      assert.deepStrictEqual(result.data, { greeting: "hello", runId: ctx.runId, scoped: true, span: Option.some(caller.spanId) })
      assert.match(result.spanId, /^[0-9a-f]{16}$/)
      assert.strictEqual(result.callId, `call_${result.spanId}`)
      assert.notStrictEqual(result.spanId, caller.spanId)
    }).pipe(Effect.provide(kernelLayer())))
})

describe("the kern.tool.call span: the kernel's decision on each call", () => {
  const callSpans = (run: Effect.Effect<unknown, unknown, ToolExecutor | ToolRegistry>, options: Parameters<typeof kernelLayer>[0] = {}) => {
    const { spans, tracer } = recordingTracer()
    return run.pipe(
      Effect.map(() => spans.filter((span) => span.name === "kern.tool.call")),
      Effect.provide(Layer.merge(kernelLayer(options), Layer.setTracer(tracer)))
    )
  }
  const register = (toolId: string, safetyClass: "READ_ONLY" | "DESTRUCTIVE", maxRetries = 0) =>
    Effect.flatMap(ToolRegistry, (registry) => {
      let attempts = 0
      return registry.register({ toolId, name: toolId, safetyClass, maxRetries, idempotent: true }, {
        parameters: Schema.Struct({ secret: Schema.optional(Schema.String) }),
        handler: () => Effect.suspend(() => ++attempts === 1 && maxRetries > 0 ? Effect.fail(toolFailure("NETWORK_ERROR", "blip", true)) : Effect.succeed("ok"))
      })
    })

  it.effect("allowed, approved (by whom), denied by the budget, the scope or as an unknown tool; retries counted", () =>
    Effect.gen(function*() {
      const spans = yield* callSpans(
        Effect.gen(function*() {
          yield* register("read.thing", "READ_ONLY", 1)
          yield* register("drop.thing", "DESTRUCTIVE")
          const retried = yield* Effect.fork(inRun(execute("read.thing", {})))
          yield* TestClock.adjust("10 seconds")
          yield* Fiber.join(retried)
          yield* inRun(execute("drop.thing", {}))
          yield* inRun(execute("read.thing", {}), { budget: { maxToolCalls: 0 } })
          yield* inRun(execute("drop.thing", {}), { toolScope: "read", userSid: "telegram:7" })
          yield* inRun(execute("no.such.tool", { secret: "x" }))
        }), { gate: ApprovalGate.allowAll("operator") })
      const attributes = spans.map((span) => Object.fromEntries(span.attributes))
      assert.strictEqual(spans.length, 5)
      assert.isTrue(spans.every((span) => span.ended))
      assert.deepInclude(attributes[0], { "kern.tool.id": "read.thing", "kern.tool.safety_class": "READ_ONLY", "kern.tool.decision": "allowed", "kern.tool.status": "ok", "kern.tool.retries": 1 })
      assert.deepInclude(attributes[1], { "kern.tool.id": "drop.thing", "kern.tool.decision": "approved", "kern.tool.approved_by": "operator", "kern.tool.status": "ok" })
      assert.deepInclude(attributes[2], { "kern.tool.decision": "denied", "kern.tool.denied_by": "budget", "kern.tool.error_code": "BUDGET_EXCEEDED" })
      assert.deepInclude(attributes[3], { "kern.tool.decision": "denied", "kern.tool.denied_by": "scope", "kern.tool.status": "denied" })
      assert.deepInclude(attributes[4], { "kern.tool.id": "no.such.tool", "kern.tool.denied_by": "unknown_tool", "kern.tool.error_code": "NOT_FOUND" })
      assert.strictEqual(attributes[4]?.["kern.tool.args"], "{\"secret\":\"x\"}")
    }))

  it.effect("denied when the approval is refused: a DESTRUCTIVE call under a gate that says no", () =>
    Effect.gen(function*() {
      const spans = yield* callSpans(
        Effect.gen(function*() {
          yield* register("drop.thing", "DESTRUCTIVE")
          yield* inRun(execute("drop.thing", {}))
        }), { gate: ApprovalGate.denyAll("nobody here") })
      assert.deepInclude(Object.fromEntries(spans[0]!.attributes), { "kern.tool.decision": "denied", "kern.tool.denied_by": "approval" })
    }))
})
