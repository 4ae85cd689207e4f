import { type AiError, LanguageModel, type Response } from "@effect/ai"
import { Effect, Schema } from "effect"
import { EventLog, recordRunEvent } from "../kernel/EventLog.js"
import type { DecisionKey } from "../kernel/namespaces.js"
import { toolResultText } from "../kernel/resultText.js"
import { RunContext, type RunContextData } from "../kernel/RunContext.js"
import { ToolExecutor } from "../kernel/ToolExecutor.js"
import { ToolRegistry } from "../kernel/ToolRegistry.js"
import { fromAiError } from "../model/ProviderError.js"
import { Critique, PlanDraft, type PlanStep, RunRecord, StepArtifact, Verdict } from "./agenticRecord.js"
import { critiquePrompt, planPrompt, planSteps, resultSummary, shorten } from "./agenticPrompt.js"
import { addUsage, noUsage, type TurnUsage } from "./TurnEvent.js"

export { Critique, PlanStep, RunRecord, StepArtifact } from "./agenticRecord.js"

/** The model could not produce a plan, so nothing ran. */
export class AgenticRunError extends Schema.TaggedError<AgenticRunError>()("AgenticRunError", {
  runId: Schema.String,
  reason: Schema.Literal("plan"),
  message: Schema.String
}) {}

export const budgetExhausted = "budget exhausted"

/** `ctx.metadata.dryRun === true`: plan only, no tool calls. */
export const isDryRun = (ctx: RunContextData): boolean => ctx.metadata["dryRun"] === true

const describe = (error: AiError.AiError): string => fromAiError(error).message

const usageOf = (usage: Response.Usage): TurnUsage => ({
  inputTokens: usage.inputTokens ?? 0,
  outputTokens: usage.outputTokens ?? 0,
  cachedInputTokens: usage.cachedInputTokens ?? 0,
  cacheWriteTokens: 0,
  costUsdCents: 0
})

/** Passed iff every step succeeded: what is left when the model cannot judge. */
export const ruleCritique = (steps: ReadonlyArray<StepArtifact>, why: string): Critique => {
  const ok = steps.filter((step) => step.ok).length
  return new Critique({
    passed: steps.every((step) => step.ok),
    notes: `model critique unavailable (${shorten(why, 300)}); rule-based: ${ok} of ${steps.length} steps succeeded`,
    source: "rules"
  })
}

/**
 * Plan, execute, critique (seed 002, AgenticRuntime). The plan comes from the model, every step goes through the
 * kernel's executor (policy, budget, retries, audit), and the model judges the results. Runs in the caller's
 * RunContext: its budget bounds the steps and `metadata.dryRun` stops after planning.
 */
export class AgenticRuntime extends Effect.Service<AgenticRuntime>()("kern/turn/AgenticRuntime", {
  effect: Effect.gen(function*() {
    const model = yield* LanguageModel.LanguageModel
    const registry = yield* ToolRegistry
    const executor = yield* ToolExecutor
    const eventLog = yield* EventLog

    const audit = (ctx: RunContextData, decisionKey: DecisionKey, status: string, detail: unknown) =>
      recordRunEvent(eventLog, ctx, decisionKey, status, detail)

    const plan = (ctx: RunContextData, goal: string) =>
      Effect.gen(function*() {
        const tools = yield* registry.listTools
        const response = yield* model.generateObject({ prompt: planPrompt(goal, tools), schema: PlanDraft, objectName: "plan" })
        const usage = usageOf(response.usage)
        yield* ctx.budget.addPromptTokens(usage.inputTokens)
        return { steps: planSteps(response.value), usage }
      }).pipe(
        Effect.mapError((error) =>
          new AgenticRunError({ runId: ctx.runId, reason: "plan", message: `could not plan "${shorten(goal, 80)}": ${describe(error)}` })
        ),
        Effect.withSpan("kern.agent.agentic.plan")
      )

    const step = (ctx: RunContextData, planned: PlanStep, index: number): Effect.Effect<StepArtifact> =>
      Effect.gen(function*() {
        const base = { index, toolId: planned.toolId }
        if ((yield* ctx.budget.remainingToolCalls) <= 0 || (yield* ctx.budget.budgetExceeded)) {
          return new StepArtifact({ ...base, ok: false, error: budgetExhausted, errorCode: "BUDGET_EXCEEDED", latencyMs: 0 })
        }
        const result = yield* executor.executeIn(ctx, planned.toolId, planned.args)
        return result.success
          ? new StepArtifact({ ...base, ok: true, summary: resultSummary(result.data), latencyMs: result.latencyMs })
          : new StepArtifact({
            ...base,
            ok: false,
            error: shorten(toolResultText(result)),
            ...(result.errorCode === undefined ? {} : { errorCode: result.errorCode }),
            latencyMs: result.latencyMs
          })
      })

    const critique = (ctx: RunContextData, goal: string, planned: ReadonlyArray<PlanStep>, steps: ReadonlyArray<StepArtifact>) =>
      model.generateObject({ prompt: critiquePrompt(goal, planned, steps), schema: Verdict, objectName: "critique" }).pipe(
        Effect.tap((response) => ctx.budget.addPromptTokens(response.usage.inputTokens ?? 0)),
        Effect.map((response) => ({
          critique: new Critique({ ...response.value, source: "model" }),
          usage: usageOf(response.usage)
        })),
        Effect.catchAll((error) => Effect.succeed({ critique: ruleCritique(steps, describe(error)), usage: noUsage })),
        Effect.withSpan("kern.agent.agentic.critique")
      )

    /** Plans `goal`, runs the plan unless this is a dry run, and judges the outcome. */
    const run = (goal: string): Effect.Effect<RunRecord, AgenticRunError, RunContext> =>
      Effect.gen(function*() {
        const ctx = yield* RunContext
        const dryRun = isDryRun(ctx)
        yield* Effect.annotateCurrentSpan({ "kern.run.id": ctx.runId, "kern.agentic.dryRun": dryRun })
        yield* audit(ctx, "kernel.run.started", "ok", { kind: "agentic", goal: shorten(goal, 200), dryRun })

        const planned = yield* plan(ctx, goal).pipe(
          Effect.tapError((error) =>
            audit(ctx, "kernel.run.finished", "error", { kind: "agentic", dryRun, planSteps: 0, error: error.message })
          )
        )
        const steps = dryRun ? [] : yield* Effect.forEach(planned.steps, (planStep, index) => step(ctx, planStep, index))
        const judged = dryRun
          ? { critique: new Critique({ passed: true, notes: "dry run", source: "dry-run" }), usage: noUsage }
          : yield* critique(ctx, goal, planned.steps, steps)

        const record = new RunRecord({ runId: ctx.runId, goal, dryRun, plan: planned.steps, steps, critique: judged.critique })
        yield* audit(ctx, "kernel.run.finished", record.critique.passed ? "ok" : "failed", {
          kind: "agentic",
          dryRun,
          planSteps: planned.steps.length,
          executed: steps.filter((s) => s.error !== budgetExhausted).length,
          succeeded: steps.filter((s) => s.ok).length,
          passed: record.critique.passed,
          critique: record.critique.source,
          usage: addUsage(planned.usage, judged.usage)
        })
        return record
      }).pipe(Effect.withSpan("kern.agent.agentic.run"))

    return { run } as const
  })
}) {}
