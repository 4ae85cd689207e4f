import { Clock, Context, Duration, Effect, Layer, Option, ParseResult, Ref, Schedule, Schema } from "effect"
import type { ContractEnforcement } from "../config/schema.js"
import { ApprovalGate } from "./ApprovalGate.js"
import { ContractBaselineStore } from "./ContractBaselineStore.js"
import { type ContractCheck, makeContractCheck } from "./contractCheck.js"
import { ToolResult } from "./contracts.js"
import { EventLog, type EventInput } from "./EventLog.js"
import { argsDigest } from "./fingerprint.js"
import { randomHex, RunContext, type RunContextData } from "./RunContext.js"
import { type CallServices, type RegisteredTool, ToolRegistry } from "./ToolRegistry.js"
import { ToolPolicy } from "./ToolPolicy.js"
import { timeoutFail } from "./timeout.js"
import { makeToolMetrics } from "./toolMetrics.js"
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

/** Retries back off exponentially from 100 ms with jitter; how many depends on the tool and the run. */
const retrySchedule = Schedule.exponential("100 millis").pipe(Schedule.jittered)

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

  const { countCall, observeLatency } = makeToolMetrics()
  const checkContract = makeContractCheck(contractEnforcement, surface, baselines)

  /** Builds the event only when a log will keep it (the digest of the arguments is not free). */
  const emit = (event: () => EventInput) =>
    eventLog.enabled
      ? eventLog.record(event()).pipe(
        Effect.catchAll((error) => Effect.logWarning(`kern: could not record a kernel event: ${error.message}`))
      )
      : Effect.void

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
