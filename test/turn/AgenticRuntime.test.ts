import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref, Schema } from "effect"
import { AgenticRunError, AgenticRuntime, budgetExhausted } from "../../src/turn/AgenticRuntime.js"
import { EventLog } from "../../src/kernel/EventLog.js"
import type { RunContextOptions } from "../../src/kernel/RunContext.js"
import { ToolRegistry } from "../../src/kernel/ToolRegistry.js"
import { layerFromConfig } from "../../src/model/Provider.js"
import { inRun, kernelLayer } from "../kernel/harness.js"
import { loadedConfig } from "../model/harness.js"
import { FakeReply, type FakeModelServerShape, make as makeFakeServer } from "../support/fakeModelServer.js"
import * as SpendGuard from "../../src/model/SpendGuard.js"

const CountArgs = Schema.Struct({ by: Schema.Int.annotations({ description: "How much to add" }) })

interface Step {
  readonly toolId: string
  readonly args: unknown
  readonly purpose?: string
}

/** The plan as the model's JSON text. */
const planReply = (...steps: ReadonlyArray<Step>) =>
  FakeReply.text(JSON.stringify({
    steps: steps.map((step) => ({ toolId: step.toolId, argsJson: JSON.stringify(step.args), purpose: step.purpose ?? "count" }))
  }))

const verdictReply = (passed: boolean, notes: string) => FakeReply.text(JSON.stringify({ passed, notes }))

/**
 * Runs `body` against a fresh fake model server, with a real kernel (in-memory event log) whose registry holds
 * `test.count`, a tool that adds `by` to the returned counter.
 */
const withRuntime = <A, E>(
  body: (server: FakeModelServerShape, counter: Ref.Ref<number>) => Effect.Effect<A, E, AgenticRuntime | EventLog>
) =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* makeFakeServer
    const model = layerFromConfig(loadedConfig({ provider: "openrouter", model: "test-model", baseURL: server.baseURL }, {
      OPENROUTER_API_KEY: "sk-test"
    })).pipe(Layer.provide(SpendGuard.layerNone)).pipe(Layer.provide(NodeHttpClient.layerUndici))
    const kernel = kernelLayer()
    const runtime = AgenticRuntime.Default.pipe(Layer.provideMerge(Layer.merge(kernel, model)))
    return yield* Effect.gen(function*() {
      const counter = yield* Ref.make(0)
      const registry = yield* ToolRegistry
      yield* registry.register({ toolId: "test.count", name: "Count", description: "Adds to a counter" }, {
        parameters: CountArgs,
        handler: (args) => Effect.as(Ref.update(counter, (n) => n + args.by), { text: `added ${args.by}` })
      })
      return yield* body(server, counter)
    }).pipe(Effect.provide(runtime))
  }))

const run = (goal: string, options: RunContextOptions = {}) =>
  inRun(Effect.flatMap(AgenticRuntime, (runtime) => runtime.run(goal)), options)

const eventsOf = (runId: string) => Effect.flatMap(EventLog, (log) => log.byRun(runId))

describe("AgenticRuntime", () => {
  it.live("plans with the model, executes every step through the kernel, and records the model's verdict", () =>
    withRuntime((server, counter) =>
      Effect.gen(function*() {
        yield* server.reply(
          planReply({ toolId: "test.count", args: { by: 1 } }, { toolId: "test.count", args: { by: 2 } }),
          verdictReply(true, "counted to three")
        )
        const record = yield* run("count to three")
        expect(yield* Ref.get(counter)).toBe(3)
        expect(record.dryRun).toBe(false)
        expect(record.plan.map((step) => step.args)).toEqual([{ by: 1 }, { by: 2 }])
        expect(record.steps.map((step) => [step.index, step.toolId, step.ok, step.summary])).toEqual([
          [0, "test.count", true, "added 1"],
          [1, "test.count", true, "added 2"]
        ])
        expect(record.critique).toMatchObject({ passed: true, notes: "counted to three", source: "model" })

        const requests = yield* server.requests
        expect(requests).toHaveLength(2)
        const planBody = requests[0]!.body as { response_format?: { type: string }; messages: unknown }
        expect(planBody.response_format?.type).toBe("json_schema")
        const planText = JSON.stringify(planBody.messages)
        expect(planText).toContain("test.count")
        expect(planText).toContain("How much to add")
        expect(planText).toContain("count to three")
        expect(JSON.stringify(requests[1]!.body)).toContain("added 2")

        const events = yield* eventsOf(record.runId)
        expect(events.map((e) => e.decisionKey)).toEqual([
          "kernel.run.started",
          "kernel.tool.dispatch",
          "kernel.tool.dispatch",
          "kernel.run.finished"
        ])
        const finished = events[3]!
        expect(finished.status).toBe("ok")
        expect(JSON.parse(finished.detail ?? "{}")).toMatchObject({ planSteps: 2, executed: 2, succeeded: 2, passed: true })
      })))

  it.live("a dry run plans only: no handler runs, no executor event, and the critique passes as a dry run", () =>
    withRuntime((server, counter) =>
      Effect.gen(function*() {
        yield* server.reply(planReply({ toolId: "test.count", args: { by: 5 } }))
        const record = yield* run("count to five", { metadata: { dryRun: true } })
        expect(yield* Ref.get(counter)).toBe(0)
        expect(record.dryRun).toBe(true)
        expect(record.plan).toHaveLength(1)
        expect(record.steps).toEqual([])
        expect(record.critique).toMatchObject({ passed: true, notes: "dry run" })
        expect((yield* server.requests).length).toBe(1)
        const events = yield* eventsOf(record.runId)
        expect(events.map((e) => e.decisionKey)).toEqual(["kernel.run.started", "kernel.run.finished"])
        expect(JSON.parse(events[1]!.detail ?? "{}")).toMatchObject({ dryRun: true, planSteps: 1, executed: 0 })
      })))

  it.live("when the budget runs out mid-plan the remaining steps are 'budget exhausted' and never reach the executor", () =>
    withRuntime((server, counter) =>
      Effect.gen(function*() {
        yield* server.reply(
          planReply(...[1, 2, 3, 4].map((by) => ({ toolId: "test.count", args: { by } }))),
          verdictReply(false, "only half done")
        )
        const record = yield* run("count to ten", { budget: { maxToolCalls: 2 } })
        expect(yield* Ref.get(counter)).toBe(3)
        expect(record.steps.map((step) => step.ok)).toEqual([true, true, false, false])
        expect(record.steps.slice(2).map((step) => step.error)).toEqual([budgetExhausted, budgetExhausted])
        expect(record.steps.slice(2).map((step) => step.latencyMs)).toEqual([0, 0])
        const events = yield* eventsOf(record.runId)
        expect(events.filter((e) => e.decisionKey === "kernel.tool.dispatch")).toHaveLength(2)
        expect(events.some((e) => e.decisionKey === "kernel.budget.exceeded")).toBe(false)
        const finished = events.find((e) => e.decisionKey === "kernel.run.finished")!
        expect(finished.status).toBe("failed")
        expect(JSON.parse(finished.detail ?? "{}")).toMatchObject({ planSteps: 4, executed: 2, succeeded: 2 })
      })))

  it.live("a step naming an unknown tool is kept and fails as NOT_FOUND from the executor; the rest still run", () =>
    withRuntime((server, counter) =>
      Effect.gen(function*() {
        yield* server.reply(
          planReply({ toolId: "nope.tool", args: {} }, { toolId: "test.count", args: { by: 4 } }),
          verdictReply(false, "one step failed")
        )
        const record = yield* run("count to four")
        expect(record.plan.map((step) => step.toolId)).toEqual(["nope.tool", "test.count"])
        const [missing, counted] = record.steps
        expect(missing).toMatchObject({ index: 0, toolId: "nope.tool", ok: false, errorCode: "NOT_FOUND" })
        expect(missing?.error).toContain("unknown tool \"nope.tool\"")
        expect(missing?.error).toContain("test.count")
        expect(counted?.ok).toBe(true)
        expect(yield* Ref.get(counter)).toBe(4)
      })))

  it.live("arguments the model wrote as non-JSON text reach the executor, which rejects them", () =>
    withRuntime((server, counter) =>
      Effect.gen(function*() {
        yield* server.reply(
          FakeReply.text(JSON.stringify({ steps: [{ toolId: "test.count", argsJson: "by=1", purpose: "count" }] })),
          verdictReply(false, "bad arguments")
        )
        const record = yield* run("count")
        expect(record.steps[0]).toMatchObject({ ok: false, errorCode: "VALIDATION_ERROR" })
        expect(yield* Ref.get(counter)).toBe(0)
      })))

  it.live("when the critique call fails the verdict is rule-based (passed iff every step ok) and says so", () =>
    withRuntime((server) =>
      Effect.gen(function*() {
        yield* server.reply(planReply({ toolId: "test.count", args: { by: 1 } }), FakeReply.error(401))
        const passed = yield* run("count to one")
        expect(passed.critique.passed).toBe(true)
        expect(passed.critique.source).toBe("rules")
        expect(passed.critique.notes).toContain("model critique unavailable")
        expect(passed.critique.notes).toContain("1 of 1 steps succeeded")

        yield* server.reply(planReply({ toolId: "nope.tool", args: {} }, { toolId: "test.count", args: { by: 1 } }), FakeReply.error(401))
        const failed = yield* run("count again")
        expect(failed.critique).toMatchObject({ passed: false, source: "rules" })
        expect(failed.critique.notes).toContain("1 of 2 steps succeeded")
      })))

  it.live("a plan the model cannot give fails the run with AgenticRunError, recorded as a finished run in error", () =>
    withRuntime((server, counter) =>
      Effect.gen(function*() {
        yield* server.reply(FakeReply.text("I would rather chat"))
        const error = yield* Effect.flip(run("count"))
        expect(error).toBeInstanceOf(AgenticRunError)
        expect(error.reason).toBe("plan")
        expect(error.message).toContain("could not plan")
        expect(yield* Ref.get(counter)).toBe(0)
        const events = yield* eventsOf(error.runId)
        expect(events.map((e) => [e.decisionKey, e.status])).toEqual([
          ["kernel.run.started", "ok"],
          ["kernel.run.finished", "error"]
        ])
      })))
})
