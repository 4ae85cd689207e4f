import { Clock, Context, Duration, Effect, Layer, Metric, MetricBoundaries, MetricLabel, Option, ParseResult, Ref, Schedule, Schema } from "effect"
import type { ContractEnforcement } from "../config/schema.js"
import { ApprovalGate } from "./ApprovalGate.js"
import { ContractBaselineStore } from "./ContractBaselineStore.js"
import { ToolResult } from "./contracts.js"
import { EventLog, type EventInput } from "./EventLog.js"
import { argsDigest } from "./fingerprint.js"
import { randomHex, RunContext, type RunContextData } from "./RunContext.js"
import { type CallServices, type RegisteredTool, ToolRegistry } from "./ToolRegistry.js"
import { ToolPolicy } from "./ToolPolicy.js"
import { timeoutFail } from "./timeout.js"
import { type ToolErrorCode, ToolFailure } from "./ToolFailure.js"

/** How the executor checks contracts, and which baseline surface it compares against. */
export class ExecutorSettings extends Context.Tag("kern/kernel/ExecutorSettings")<ExecutorSettings, {
  readonly contractEnforcement: ContractEnforcement
  readonly surface: string
}>() {}

export const settings = (contractEnforcement: ContractEnforcement, surface = "kernel") =>
  Layer.succeed(ExecutorSettings, { contractEnforcement, surface })

export interface ExecuteOptions {
  /** Runs instead of the registered handler (tests, dry runs); everything else is unchanged. */
  readonly overrideFn?: (args: unknown) => Effect.Effect<unknown, ToolFailure, CallServices>
}

const toolCalls = Metric.counter("kern_tool_calls_total", { description: "tool calls by tool and status" })
const toolLatency = Metric.histogram(
  "kern_tool_latency_ms",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 18 }),
  "tool call latency in milliseconds"
)

/** Retries back off exponentially from 100 ms with jitter; how many depends on the tool and the run. */
const retrySchedule = Schedule.exponential("100 millis").pipe(Schedule.jittered)

interface ContractCheck {
  readonly fingerprint: string
  readonly status: string
  readonly mismatch: boolean
  readonly deny?: string
}

const highRisk = (tool: RegisteredTool) =>
  tool.spec.safetyClass !== "READ_ONLY" || tool.spec.sideEffectLevel === "external_write"

const describeParseError = (error: ParseResult.ParseError) => ParseResult.TreeFormatter.formatErrorSync(error)

export class ToolExecutor extends Context.Tag("kern/kernel/ToolExecutor")<ToolExecutor, {
  /** Runs one tool call through the seven steps. Never fails: every failure is an error ToolResult. */
  readonly execute: (
    toolId: string,
    args: unknown,
    options?: ExecuteOptions
  ) => Effect.Effect<ToolResult, never, RunContext>
}>() {}

export const make = Effect.gen(function*() {
  const registry = yield* ToolRegistry
  const policy = yield* ToolPolicy
  const gate = yield* ApprovalGate
  const eventLog = yield* EventLog
  const baselines = yield* ContractBaselineStore
  const { contractEnforcement, surface } = yield* ExecutorSettings

  // Tagged metric keys are costly to build (they hash their labels): one per tool and status, made once.
  const counters = new Map<string, Metric.Metric.Counter<number>>()
  const histograms = new Map<string, Metric.Metric.Histogram<number>>()
  const countCall = (toolId: string, status: string) => {
    const key = `${toolId}\u0000${status}`
    let counter = counters.get(key)
    if (counter === undefined) {
      counter = Metric.taggedWithLabels(toolCalls, [MetricLabel.make("tool", toolId), MetricLabel.make("status", status)])
      counters.set(key, counter)
    }
    return Metric.update(counter, 1)
  }
  const observeLatency = (toolId: string, latencyMs: number) => {
    let histogram = histograms.get(toolId)
    if (histogram === undefined) {
      histogram = Metric.tagged(toolLatency, "tool", toolId)
      histograms.set(toolId, histogram)
    }
    return Metric.update(histogram, latencyMs)
  }

  /** Builds the event only when a log will keep it (the digest of the arguments is not free). */
  const emit = (event: () => EventInput) =>
    eventLog.enabled
      ? eventLog.record(event()).pipe(
        Effect.catchAll((error) => Effect.logWarning(`kern: could not record a kernel event: ${error.message}`))
      )
      : Effect.void

  const checkContract = (tool: RegisteredTool): Effect.Effect<ContractCheck> => {
    const fingerprint = tool.fingerprint
    if (contractEnforcement === "off") return Effect.succeed({ fingerprint, status: "unchecked", mismatch: false })
    const mismatch = fingerprint !== tool.registeredFingerprint
    const enforce = contractEnforcement === "enforce" && highRisk(tool)
    const local: ContractCheck = mismatch
      ? {
        fingerprint,
        status: "changed_since_registration",
        mismatch,
        ...(enforce ? { deny: `the contract of ${tool.spec.toolId} changed since it was registered` } : {})
      }
      : { fingerprint, status: "match", mismatch }
    // A contract that drifted since registration is reported as such; the baseline only speaks to the rest.
    if (!baselines.configured || mismatch) return Effect.succeed(local)
    return baselines.check(surface, tool.spec, fingerprint).pipe(
      Effect.map((status): ContractCheck =>
        status === "approved" || status === "none"
          ? local
          : {
            fingerprint,
            status: `baseline_${status}`,
            mismatch: true,
            ...(enforce
              ? { deny: `the contract of ${tool.spec.toolId} is ${status === "new" ? "not approved yet" : "changed from the approved baseline"}; approve it with \`kern runtime-guard approve-contract ${surface} ${tool.spec.toolId}\`` }
              : {})
          }
      ),
      Effect.catchAll((error) =>
        Effect.succeed<ContractCheck>({
          fingerprint,
          status: "baseline_error",
          mismatch: true,
          ...(enforce ? { deny: `the contract baseline check failed: ${error.message}` } : {})
        })
      )
    )
  }

  const execute = (toolId: string, args: unknown, options: ExecuteOptions = {}) =>
    Effect.gen(function*() {
      const ctx = yield* RunContext
      const startedAt = yield* Clock.currentTimeMillis
      // One random id per call: the result's span id is the call id's hex.
      const spanId = yield* randomHex(16)
      const callId = `call_${spanId}`

      const result = (
        fields: { readonly success: boolean; readonly data?: unknown; readonly errorCode?: ToolErrorCode; readonly errorMessage?: string; readonly retries?: number },
        latencyMs: number
      ) =>
        new ToolResult(
          {
            callId,
            toolId,
            success: fields.success,
            data: fields.data ?? null,
            ...(fields.errorCode === undefined ? {} : { errorCode: fields.errorCode }),
            ...(fields.errorMessage === undefined ? {} : { errorMessage: fields.errorMessage }),
            latencyMs,
            retries: fields.retries ?? 0,
            traceId: ctx.traceId,
            spanId
          },
          true
        )

      const baseEvent = (tool: RegisteredTool | undefined, check: ContractCheck | undefined) => ({
        runId: ctx.runId,
        traceId: ctx.traceId,
        sessionId: ctx.sessionId,
        toolId,
        argsDigest: argsDigest(args),
        ...(tool === undefined ? {} : { registeredFingerprint: tool.registeredFingerprint }),
        ...(check === undefined
          ? {}
          : {
            contractFingerprint: check.fingerprint,
            contractStatus: check.status,
            contractEnforcement,
            contractMismatch: check.mismatch
          })
      })

      /** A call refused before it ran: no budget taken, nothing executed. */
      const refuse = (
        decisionKey: EventInput["decisionKey"],
        errorCode: ToolErrorCode,
        errorMessage: string,
        tool: RegisteredTool | undefined,
        check: ContractCheck | undefined
      ) =>
        Effect.gen(function*() {
          const latencyMs = (yield* Clock.currentTimeMillis) - startedAt
          yield* emit(() => ({ ...baseEvent(tool, check), decisionKey, status: "denied", errorCode, errorMessage, latencyMs, retries: 0 }))
          yield* countCall(toolId, errorCode)
          return result({ success: false, errorCode, errorMessage }, latencyMs)
        })

      // 1. Lookup.
      const found = yield* registry.get(toolId)
      if (Option.isNone(found)) {
        const known = yield* registry.listIds
        return yield* refuse(
          "kernel.tool.dispatch",
          "NOT_FOUND",
          `unknown tool "${toolId}"; available tools: ${known.join(", ") || "(none)"}`,
          undefined,
          undefined
        )
      }
      const tool = found.value
      const spec = tool.spec

      // 2. Contract, per contractEnforcement.
      const check = yield* checkContract(tool)
      if (check.deny !== undefined) {
        return yield* refuse("kernel.tool.policy.blocked", "PERMISSION_DENIED", check.deny, tool, check)
      }

      // 3. Policy, and approval where the policy asks for it.
      const decision = policy.evaluate(spec, ctx.agentName, ctx.safetyMode)
      let approvedBy: string | undefined
      if (decision._tag === "Deny") {
        return yield* refuse("kernel.tool.policy.blocked", "PERMISSION_DENIED", decision.reason, tool, check)
      }
      if (decision._tag === "RequireApproval") {
        const answer = yield* gate.request({
          spec,
          args,
          reason: decision.reason,
          runId: ctx.runId,
          agentName: ctx.agentName,
          userSid: ctx.userSid
        })
        if (!answer.approved) {
          return yield* refuse(
            "kernel.tool.policy.blocked",
            "PERMISSION_DENIED",
            `${decision.reason} and needs approval, which was refused (${answer.by}: ${answer.reason})`,
            tool,
            check
          )
        }
        approvedBy = answer.by
      }

      // 4. Budget: one call reserved atomically, so parallel calls never overshoot.
      const reservation = yield* ctx.budget.reserveToolCall
      if (!reservation.granted) {
        return yield* refuse(
          "kernel.budget.exceeded",
          "BUDGET_EXCEEDED",
          `the run's budget is used up (${reservation.cap} reached)`,
          tool,
          check
        )
      }

      // 5. Handler, 6. arguments.
      const handler = options.overrideFn ?? tool.handler
      // Argument schemas are synchronous: decoding outside the fiber interpreter is much cheaper.
      const decoded = Schema.decodeUnknownEither(tool.parameters)(args, { errors: "all", onExcessProperty: "error" })

      // 7. Run with timeout and retries.
      const attempts = yield* Ref.make(0)
      const outcome = decoded._tag === "Left"
        ? { _tag: "Left" as const, left: new ToolFailure({ code: "VALIDATION_ERROR", message: `invalid arguments for ${toolId}: ${describeParseError(decoded.left)}`, retryable: false }) }
        : yield* runHandler(tool, handler, decoded.right, ctx, attempts)
      const retries = Math.max(0, (yield* Ref.get(attempts)) - 1)
      const latencyMs = (yield* Clock.currentTimeMillis) - startedAt

      const final = outcome._tag === "Right"
        ? result({ success: true, data: outcome.right, retries }, latencyMs)
        : result({ success: false, errorCode: outcome.left.code, errorMessage: outcome.left.message, retries }, latencyMs)

      if (spec.emitTrace) {
        yield* emit(() => ({
          ...baseEvent(tool, check),
          decisionKey: "kernel.tool.dispatch",
          status: final.success ? "ok" : "error",
          errorCode: final.errorCode ?? null,
          errorMessage: final.errorMessage ?? null,
          latencyMs,
          retries,
          ...(approvedBy === undefined ? {} : { detail: JSON.stringify({ approvedBy }) })
        }))
      }
      yield* ctx.budget.addLatencyMs(latencyMs)
      if (spec.emitMetric) {
        const status = final.errorCode ?? "OK"
        yield* countCall(toolId, status)
        yield* observeLatency(toolId, latencyMs)
      }
      return final
    })

  const runHandler = (
    tool: RegisteredTool,
    handler: (args: unknown) => Effect.Effect<unknown, ToolFailure, CallServices>,
    args: unknown,
    ctx: RunContextData,
    attempts: Ref.Ref<number>
  ) => {
    const spec = tool.spec
    const timeoutMs = Math.max(spec.timeoutMs, tool.timeoutFor?.(args) ?? 0)
    const attempt = Effect.flatMap(Ref.updateAndGet(attempts, (n) => n + 1), (n) => {
      const run = handler(args).pipe(
        Effect.scoped,
        Effect.catchAllDefect((defect) =>
          Effect.fail(
            new ToolFailure({
              code: "UNEXPECTED",
              message: `${spec.toolId} failed unexpectedly: ${defect instanceof Error ? defect.message : String(defect)}`,
              retryable: false
            })
          )
        ),
        (effect) =>
          timeoutFail(effect, Duration.millis(timeoutMs), () =>
            new ToolFailure({ code: "TIMEOUT", message: `${spec.toolId} timed out after ${timeoutMs} ms`, retryable: false }))
      )
      return spec.emitTrace
        ? Effect.withSpan(run, "kern.tool.execute", {
          captureStackTrace: false,
          attributes: { "kern.tool.id": spec.toolId, "kern.run.id": ctx.runId, "kern.tool.attempt": n }
        })
        : run
    })
    const times = spec.idempotent ? Math.min(spec.maxRetries, ctx.budget.limits.maxRetriesPerTool) : 0
    // The retry driver is built only after a first retryable failure: most calls succeed at once.
    const retried = times === 0
      ? attempt
      : Effect.catchIf(attempt, (failure) => failure.retryable, (first) =>
        Effect.flatMap(Ref.make(true), (replay) =>
          Effect.retry(
            Effect.flatMap(Ref.getAndSet(replay, false), (isReplay) => (isReplay ? Effect.fail(first) : attempt)),
            { schedule: retrySchedule, times, while: (failure) => failure.retryable }
          )))
    return Effect.either(retried)
  }

  return ToolExecutor.of({ execute })
})

export const layer = Layer.effect(ToolExecutor, make)
