import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, FiberId, Option, Ref, Schema, Scope, TestClock } from "effect"
import * as ApprovalGate from "../../src/kernel/ApprovalGate.js"
import * as EventLog from "../../src/kernel/EventLog.js"
import { RunContext } from "../../src/kernel/RunContext.js"
import { type ExecuteOptions, ToolExecutor } from "../../src/kernel/ToolExecutor.js"
import { toolFailure, ToolFailure } from "../../src/kernel/ToolFailure.js"
import * as ToolPolicy from "../../src/kernel/ToolPolicy.js"
import { ToolRegistry } from "../../src/kernel/ToolRegistry.js"
import { recordingTracer } from "../support/recordingTracer.js"
import { inRun, kernelLayer } from "./harness.js"

const EchoArgs = Schema.Struct({ text: Schema.String })
const Empty = Schema.Struct({})

/** Registers `echo.tool` (READ_ONLY) whose handler counts its runs. */
const registerEcho = (runs: Ref.Ref<number>, spec: Partial<Parameters<ToolRegistry["Type"]["register"]>[0]> = {}) =>
  Effect.flatMap(ToolRegistry, (registry) =>
    registry.register({ toolId: "echo.tool", name: "Echo", ...spec }, {
      parameters: EchoArgs,
      handler: (args) => Effect.as(Ref.update(runs, (n) => n + 1), { echoed: args.text })
    }))

const execute = (toolId: string, args: unknown) => Effect.flatMap(ToolExecutor, (executor) => executor.execute(toolId, args))

const used = Effect.flatMap(RunContext, (ctx) => Effect.map(ctx.budget.usage, (usage) => usage.toolCallsUsed))

describe("ToolExecutor", () => {
  it.effect("runs a registered tool and returns its data with ids from the run", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      yield* registerEcho(runs)
      const result = yield* inRun(Effect.zip(execute("echo.tool", { text: "hi" }), RunContext))
      const [toolResult, ctx] = result
      assert.isTrue(toolResult.success)
      assert.deepStrictEqual(toolResult.data, { echoed: "hi" })
      assert.strictEqual(toolResult.traceId, ctx.traceId)
      assert.match(toolResult.callId, /^call_[0-9a-f]{16}$/)
      assert.match(toolResult.spanId, /^[0-9a-f]{16}$/)
      assert.strictEqual(toolResult.retries, 0)
      assert.strictEqual(yield* Ref.get(runs), 1)
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("step 1: an unknown tool is NOT_FOUND naming the tools that exist, and takes no budget", () =>
    Effect.gen(function*() {
      yield* registerEcho(yield* Ref.make(0))
      const [result, calls] = yield* inRun(Effect.zip(execute("nope", {}), used))
      assert.strictEqual(result.errorCode, "NOT_FOUND")
      assert.include(result.errorMessage, "echo.tool")
      assert.strictEqual(calls, 0)
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("an unknown tool's error names only the tools the run may use: offered, delegated, within its user's scope", () =>
    Effect.gen(function*() {
      // A tool says which user scope it needs by a risk tag; untagged, it needs full.
      yield* registerEcho(yield* Ref.make(0), { riskTags: ["scope:read"] })
      const registry = yield* ToolRegistry
      const handler = () => Effect.void
      yield* registry.register({ toolId: "notes.write", name: "Write", safetyClass: "LOCAL_WRITE" }, { parameters: Schema.Struct({}), handler })
      yield* registry.register({ toolId: "secret.admin", name: "Admin", safetyClass: "DESTRUCTIVE" }, { parameters: Schema.Struct({}), handler })
      const listed = (message: string) => message.slice(message.indexOf("available tools: ") + "available tools: ".length).split(", ")

      // The operator outside a turn (kern kernel exec): every registered tool.
      const all = yield* inRun(execute("nope", {}))
      assert.sameMembers(listed(all.errorMessage ?? ""), ["echo.tool", "notes.write", "secret.admin"])
      // A paired user with read scope: the tools that need more are not named to their model.
      const reader = yield* inRun(execute("nope", {}), { toolScope: "read" })
      assert.deepStrictEqual(listed(reader.errorMessage ?? ""), ["echo.tool"])
      // A sub-agent given only notes.write: nothing else is named, not even a read tool it was not given.
      const delegated = yield* inRun(execute("nope", {}), { delegation: { id: 1, depth: 1, tools: new Set(["notes.write"]) } })
      assert.deepStrictEqual(listed(delegated.errorMessage ?? ""), ["notes.write"])
      // A turn that offered only echo.tool.
      const offered = yield* inRun(
        Effect.flatMap(RunContext, (ctx) =>
          Effect.provideService(execute("nope", {}), RunContext, { ...ctx, offered: new Set(["echo.tool"]) }))
      )
      assert.deepStrictEqual(listed(offered.errorMessage ?? ""), ["echo.tool"])
      // Nobody's scope: none named at all.
      const none = yield* inRun(execute("nope", {}), { toolScope: "none" })
      assert.include(none.errorMessage, "available tools: (none)")
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("step 3: a denied call neither runs nor consumes budget, and is audited as blocked", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      yield* registerEcho(runs)
      const [result, calls, ctx] = yield* inRun(Effect.all([execute("echo.tool", { text: "x" }), used, RunContext]))
      assert.strictEqual(result.errorCode, "PERMISSION_DENIED")
      assert.include(result.errorMessage, "blocked by policy")
      assert.strictEqual(calls, 0)
      assert.strictEqual(yield* Ref.get(runs), 0)
      const events = yield* Effect.flatMap(EventLog.EventLog, (log) => log.byRun(ctx.runId))
      assert.deepStrictEqual(events.map((event) => [event.decisionKey, event.status]), [["kernel.tool.policy.blocked", "denied"]])
    }).pipe(Effect.provide(kernelLayer({ policy: ToolPolicy.normal({ blockedTools: ["echo.tool"] }) }))))

  it.effect("SAFE mode on the run allows READ_ONLY but denies LOCAL_WRITE and NETWORK", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      yield* registerEcho(runs)
      const registry = yield* ToolRegistry
      for (const [toolId, safetyClass] of [["net.fetch", "NETWORK"], ["fs.write", "LOCAL_WRITE"]] as const) {
        yield* registry.register({ toolId, name: toolId, safetyClass }, {
          parameters: EchoArgs,
          handler: () => Ref.update(runs, (n) => n + 1)
        })
      }
      const results = yield* inRun(
        Effect.all([execute("echo.tool", { text: "a" }), execute("net.fetch", { text: "a" }), execute("fs.write", { text: "a" })]),
        { safetyMode: "SAFE" }
      )
      assert.deepStrictEqual(results.map((r) => r.errorCode ?? "OK"), ["OK", "PERMISSION_DENIED", "PERMISSION_DENIED"])
      assert.include(results[1]?.errorMessage, "read-only tools only")
      assert.strictEqual(yield* Ref.get(runs), 1)
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("DESTRUCTIVE needs approval: refused by the deny-all gate, run and audited with the allow-all gate", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      const scenario = Effect.gen(function*() {
        const registry = yield* ToolRegistry
        yield* registry.register({ toolId: "sys.wipe", name: "Wipe", safetyClass: "DESTRUCTIVE" }, {
          parameters: Schema.Struct({}),
          handler: () => Ref.update(runs, (n) => n + 1)
        })
        const [result, ctx] = yield* inRun(Effect.zip(execute("sys.wipe", {}), RunContext))
        const events = yield* Effect.flatMap(EventLog.EventLog, (log) => log.byRun(ctx.runId))
        return { result, events }
      })
      const denied = yield* scenario.pipe(Effect.provide(kernelLayer({ gate: ApprovalGate.denyAll() })))
      assert.strictEqual(denied.result.errorCode, "PERMISSION_DENIED")
      assert.include(denied.result.errorMessage, "needs approval")
      assert.strictEqual(yield* Ref.get(runs), 0)
      const approved = yield* scenario.pipe(Effect.provide(kernelLayer({ gate: ApprovalGate.allowAll() })))
      assert.isTrue(approved.result.success)
      assert.strictEqual(yield* Ref.get(runs), 1)
      assert.deepStrictEqual(JSON.parse(approved.events[0]?.detail ?? "{}"), { approvedBy: "policy:auto" })
    }))

  it.effect("step 4: with maxToolCalls 0 the call is BUDGET_EXCEEDED and never runs", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      yield* registerEcho(runs)
      const result = yield* inRun(execute("echo.tool", { text: "x" }), { budget: { maxToolCalls: 0 } })
      assert.strictEqual(result.errorCode, "BUDGET_EXCEEDED")
      assert.include(result.errorMessage, "maxToolCalls")
      assert.strictEqual(yield* Ref.get(runs), 0)
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("100 parallel calls against maxToolCalls 20 run exactly 20", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      yield* registerEcho(runs)
      const [results, calls] = yield* inRun(
        Effect.zip(
          Effect.all(Array.from({ length: 100 }, (_, i) => execute("echo.tool", { text: String(i) })), {
            concurrency: "unbounded"
          }),
          used
        ),
        { budget: { maxToolCalls: 20 } }
      )
      assert.strictEqual(results.filter((r) => r.success).length, 20)
      assert.strictEqual(results.filter((r) => r.errorCode === "BUDGET_EXCEEDED").length, 80)
      assert.strictEqual(yield* Ref.get(runs), 20)
      assert.strictEqual(calls, 20)
    }).pipe(Effect.provide(kernelLayer({ eventLog: EventLog.layerOff }))))

  it.effect("step 6: bad arguments are a VALIDATION_ERROR naming the field, and the handler never runs", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      yield* registerEcho(runs)
      const results = yield* inRun(Effect.all([
        execute("echo.tool", { text: 42 }),
        execute("echo.tool", {}),
        execute("echo.tool", { text: "ok", extra: true }),
        execute("echo.tool", "not an object")
      ]))
      for (const result of results) assert.strictEqual(result.errorCode, "VALIDATION_ERROR")
      assert.include(results[0]?.errorMessage, "text")
      assert.include(results[1]?.errorMessage, "text")
      assert.include(results[2]?.errorMessage, "extra")
      assert.strictEqual(yield* Ref.get(runs), 0)
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("retries an idempotent tool's retryable failure with backoff on the Clock, and counts retries", () =>
    Effect.gen(function*() {
      const attempts = yield* Ref.make(0)
      const registry = yield* ToolRegistry
      yield* registry.register({ toolId: "flaky.net", name: "Flaky", maxRetries: 3 }, {
        parameters: Schema.Struct({}),
        handler: () =>
          Effect.flatMap(Ref.updateAndGet(attempts, (n) => n + 1), (n) =>
            n < 3 ? Effect.fail(toolFailure("NETWORK_ERROR", "connection reset", true)) : Effect.succeed("done"))
      })
      const fiber = yield* Effect.fork(inRun(execute("flaky.net", {})))
      // The backoff waits on the Clock: without time passing, the retries cannot happen.
      yield* TestClock.adjust("50 millis")
      assert.strictEqual(yield* Ref.get(attempts), 1)
      yield* TestClock.adjust("10 seconds")
      const result = yield* Fiber.join(fiber)
      assert.isTrue(result.success)
      assert.strictEqual(result.retries, 2)
      assert.strictEqual(yield* Ref.get(attempts), 3)
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("retries stop at min(spec.maxRetries, budget.maxRetriesPerTool); non-idempotent tools are not retried", () =>
    Effect.gen(function*() {
      const attempts = yield* Ref.make(0)
      const registry = yield* ToolRegistry
      const failing = () =>
        Effect.zipRight(Ref.update(attempts, (n) => n + 1), Effect.fail(toolFailure("NETWORK_ERROR", "down", true)))
      yield* registry.register({ toolId: "a.net", name: "A", maxRetries: 5 }, { parameters: Schema.Struct({}), handler: failing })
      yield* registry.register({ toolId: "b.net", name: "B", maxRetries: 5, idempotent: false }, {
        parameters: Schema.Struct({}),
        handler: failing
      })
      const fiber = yield* Effect.fork(inRun(execute("a.net", {}), { budget: { maxRetriesPerTool: 1 } }))
      yield* TestClock.adjust("1 minute")
      const a = yield* Fiber.join(fiber)
      assert.strictEqual(a.errorCode, "NETWORK_ERROR")
      assert.strictEqual(a.retries, 1)
      assert.strictEqual(yield* Ref.get(attempts), 2)
      yield* Ref.set(attempts, 0)
      const b = yield* inRun(execute("b.net", {}))
      assert.strictEqual(b.retries, 0)
      assert.strictEqual(yield* Ref.get(attempts), 1)
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("a hanging handler is a TIMEOUT after timeoutMs on the Clock, and its scope is closed", () =>
    Effect.gen(function*() {
      const released = yield* Deferred.make<void>()
      const registry = yield* ToolRegistry
      yield* registry.register({ toolId: "slow.tool", name: "Slow", timeoutMs: 1000, maxRetries: 0 }, {
        parameters: Schema.Struct({}),
        handler: () =>
          Effect.zipRight(
            Effect.addFinalizer(() => Deferred.succeed(released, undefined)),
            Effect.never
          )
      })
      const fiber = yield* Effect.fork(inRun(execute("slow.tool", {})))
      yield* TestClock.adjust("999 millis")
      assert.isNull(yield* Fiber.poll(fiber).pipe(Effect.map((exit) => exit._tag === "Some" ? "done" : null)))
      yield* TestClock.adjust("1 millis")
      const result = yield* Fiber.join(fiber)
      assert.strictEqual(result.errorCode, "TIMEOUT")
      assert.include(result.errorMessage, "1000 ms")
      assert.isTrue(yield* Deferred.isDone(released))
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("a defect in a handler becomes an UNEXPECTED result, and the executor keeps working", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      yield* registry.register({ toolId: "buggy.tool", name: "Buggy" }, {
        parameters: Schema.Struct({}),
        handler: () => Effect.sync(() => JSON.parse("{ not json"))
      })
      yield* registerEcho(yield* Ref.make(0))
      const fiber = yield* Effect.fork(inRun(Effect.all([execute("buggy.tool", {}), execute("echo.tool", { text: "still here" })])))
      yield* TestClock.adjust("1 minute")
      const [buggy, after] = yield* Fiber.join(fiber)
      assert.strictEqual(buggy.errorCode, "UNEXPECTED")
      assert.include(buggy.errorMessage, "JSON")
      assert.isTrue(after.success)
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("an exception from an idempotent tool's handler is retried up to max_retries (seed 002's step 5)", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const runs = yield* Ref.make({ flaky: 0, broken: 0, once: 0 })
      const count = (key: "flaky" | "broken" | "once") =>
        Effect.map(Ref.updateAndGet(runs, (n) => ({ ...n, [key]: n[key] + 1 })), (n) => n[key])
      // Throws on its first two runs, then answers.
      yield* registry.register({ toolId: "flaky.throw", name: "Flaky", maxRetries: 3 }, {
        parameters: Schema.Struct({}),
        handler: () =>
          Effect.flatMap(count("flaky"), (n) =>
            Effect.sync(() => {
              if (n < 3) throw new Error(`socket hang up #${n}`)
              return "done"
            }))
      })
      // Always throws: its retries are used up, and the last exception is the result.
      yield* registry.register({ toolId: "broken.throw", name: "Broken", maxRetries: 2 }, {
        parameters: Schema.Struct({}),
        handler: () => Effect.flatMap(count("broken"), (n) => Effect.die(new Error(`broken #${n}`)))
      })
      // Not idempotent: run once whatever it throws.
      yield* registry.register({ toolId: "once.throw", name: "Once", maxRetries: 3, idempotent: false }, {
        parameters: Schema.Struct({}),
        handler: () => Effect.flatMap(count("once"), () => Effect.die(new Error("half done")))
      })
      const fiber = yield* Effect.fork(inRun(Effect.all([
        execute("flaky.throw", {}),
        execute("broken.throw", {}),
        execute("once.throw", {})
      ], { concurrency: "unbounded" })))
      yield* TestClock.adjust("1 minute")
      const [flaky, broken, once] = yield* Fiber.join(fiber)
      assert.isTrue(flaky.success)
      assert.strictEqual(flaky.data, "done")
      assert.strictEqual(flaky.retries, 2)
      assert.strictEqual(broken.errorCode, "UNEXPECTED")
      assert.strictEqual(broken.retries, 2)
      assert.include(broken.errorMessage, "broken #3")
      assert.strictEqual(once.errorCode, "UNEXPECTED")
      assert.strictEqual(once.retries, 0)
      assert.deepStrictEqual(yield* Ref.get(runs), { flaky: 3, broken: 3, once: 1 })
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("overrideFn runs instead of the handler, after the same checks", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      yield* registerEcho(runs)
      const executor = yield* ToolExecutor
      const result = yield* inRun(executor.execute("echo.tool", { text: "x" }, { overrideFn: () => Effect.succeed("mocked") }))
      assert.strictEqual(result.data, "mocked")
      assert.strictEqual(yield* Ref.get(runs), 0)
      const invalid = yield* inRun(executor.execute("echo.tool", { text: 1 }, { overrideFn: () => Effect.succeed("mocked") }))
      assert.strictEqual(invalid.errorCode, "VALIDATION_ERROR")
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("a dispatch is recorded with digest, status, latency, retries and contract fields; latency accumulates", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      yield* registry.register({ toolId: "wait.tool", name: "Wait" }, {
        parameters: Schema.Struct({}),
        handler: () => Effect.sleep("250 millis")
      })
      const fiber = yield* Effect.fork(inRun(Effect.all([execute("wait.tool", {}), RunContext])))
      yield* TestClock.adjust("250 millis")
      const [result, ctx] = yield* Fiber.join(fiber)
      assert.strictEqual(result.latencyMs, 250)
      const [event] = yield* Effect.flatMap(EventLog.EventLog, (log) => log.byRun(ctx.runId))
      assert.strictEqual(event?.decisionKey, "kernel.tool.dispatch")
      assert.strictEqual(event?.status, "ok")
      assert.strictEqual(event?.latencyMs, 250)
      assert.strictEqual(event?.retries, 0)
      assert.match(event?.argsDigest ?? "", /^sha256:[0-9a-f]{32}$/)
      assert.strictEqual(event?.contractStatus, "match")
      assert.strictEqual(event?.contractEnforcement, "observe")
      assert.isFalse(event?.contractMismatch)
      assert.strictEqual(event?.contractFingerprint, event?.registeredFingerprint)
      assert.strictEqual((yield* ctx.budget.usage).latencyMsUsed, 250)
    }).pipe(Effect.provide(kernelLayer())))

  it.effect("a handler failure that is not retryable is returned as is", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      yield* registry.register({ toolId: "missing.file", name: "Missing" }, {
        parameters: Schema.Struct({}),
        handler: () => Effect.fail(new ToolFailure({ code: "NOT_FOUND", message: "no such file: a.txt" }))
      })
      const result = yield* inRun(execute("missing.file", {}))
      assert.strictEqual(result.errorCode, "NOT_FOUND")
      assert.strictEqual(result.errorMessage, "no such file: a.txt")
    }).pipe(Effect.provide(kernelLayer())))
  it.effect("a self-timed tool's untraced call runs its handler in the caller's fiber, with no Scope; a traced one, an override or a retried one in a fiber of its own", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      // What the handler sees: its fiber, and whether a Scope (the kernel's per-attempt one) is among its services.
      const seen = Effect.map(
        Effect.zip(Effect.fiberId, Effect.serviceOption(Scope.Scope)),
        ([id, scope]) => ({ fiber: FiberId.threadName(id), scoped: Option.isSome(scope) })
      )
      yield* registry.register<typeof Empty.Type, typeof Empty.Encoded, never>(
        { toolId: "self.timed", name: "Self-timed", maxRetries: 0 },
        { parameters: Empty, handler: () => seen, selfTimed: true }
      )
      yield* registry.register<typeof Empty.Type, typeof Empty.Encoded, never>(
        { toolId: "self.retried", name: "Self-timed, retried", idempotent: true, maxRetries: 2 },
        { parameters: Empty, handler: () => seen, selfTimed: true }
      )
      const caller = FiberId.threadName(yield* Effect.fiberId)
      const run = (toolId: string, options?: ExecuteOptions) =>
        inRun(Effect.flatMap(ToolExecutor, (executor) => executor.execute(toolId, {}, options)))
      const direct = yield* run("self.timed")
      assert.isTrue(direct.success, direct.errorMessage)
      assert.deepStrictEqual(direct.data, { fiber: caller, scoped: false })
      const traced = yield* run("self.timed").pipe(Effect.withTracer(recordingTracer().tracer))
      assert.isTrue((traced.data as { scoped: boolean }).scoped)
      assert.notStrictEqual((traced.data as { fiber: string }).fiber, caller)
      const overridden = yield* run("self.timed", { overrideFn: () => seen })
      assert.isTrue((overridden.data as { scoped: boolean }).scoped)
      const retried = yield* run("self.retried")
      assert.isTrue((retried.data as { scoped: boolean }).scoped)
    }).pipe(Effect.provide(kernelLayer())))
})
