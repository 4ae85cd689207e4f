import { Clock, Context, Effect, Either, Fiber, FiberRef, Layer, Random, type Tracer } from "effect"
import { KnownSecrets } from "../config/KnownSecrets.js"
import type { ContractEnforcement } from "../config/schema.js"
import { ApprovalGate } from "./ApprovalGate.js"
import { decodeToolArgs } from "./argsProblem.js"
import { runAttempts } from "./attempts.js"
import { ContractBaselineStore } from "./ContractBaselineStore.js"
import { type ContractCheck, makeContractCheck } from "./contractCheck.js"
import { knownToolResult, type ToolResult } from "./contracts.js"
import { redactCredentialShapes, redactCredentialShapesIn } from "./credentialShapes.js"
import { EventLog } from "./EventLog.js"
import { argsDigest } from "./fingerprint.js"
import { randomHex, randomHexNow, RunContext, type RunContextData } from "./RunContext.js"
import { redactSecrets, redactSecretsInText, secretRefusal } from "./secretGuard.js"
import { keepsSpans } from "./spansKept.js"
import { type CallServices, type RegisteredTool, ToolRegistry } from "./ToolRegistry.js"
import { type PolicyDecision, ToolPolicy } from "./ToolPolicy.js"
import { allowsTool, requiredScope } from "./toolScope.js"
import { makeToolMetrics } from "./toolMetrics.js"
import { logToolCall, toolOutcome } from "./toolLog.js"
import { type DeniedBy, toolCallSpanEnd, toolCallSpanStart } from "./toolSpan.js"
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

/** What one call carries from its start to its result. */
interface Call {
  readonly toolId: string
  readonly args: unknown
  readonly ctx: RunContextData
  /**
   * The fiber the call runs in, from its start to its result: its Clock, Random, tracer, log level and metric labels
   * are read from it where they are needed, with no Effect step for each.
   */
  readonly fiber: Fiber.RuntimeFiber<unknown, unknown>
  readonly clock: Clock.Clock
  readonly startedAt: number
  /** The call's `kern.tool.call` span, when its tool is traced: the decision and the outcome are set on it at the end. */
  readonly span: Tracer.Span | undefined
  /** Whether the call's attempts get spans: a traced tool, and a tracer that keeps spans. */
  readonly traced: boolean
}

/**
 * A call's contract check: known, or still running beside the call (under observe, where it never denies and only
 * the audit record needs it).
 */
type Checked = ContractCheck | Fiber.Fiber<ContractCheck>

type RefusalKey = "kernel.tool.dispatch" | "kernel.tool.policy.blocked" | "kernel.budget.exceeded"

/** How a call ended; `decisionKey` is set only for a call refused before it ran. */
interface CallEnd {
  readonly decisionKey?: RefusalKey
  /** Who refused a call refused before it ran. */
  readonly deniedBy?: DeniedBy
  readonly success: boolean
  readonly data?: unknown
  readonly errorCode?: ToolErrorCode
  readonly errorMessage?: string
  readonly retries?: number
  readonly approvedBy?: string
  /** What the audit record adds (who a scope refusal was for). */
  readonly detail?: Readonly<Record<string, unknown>>
  /** The span of the last attempt, when the call was traced: the result's span id, and its call id. */
  readonly spanId?: string | undefined
}

export class ToolExecutor extends Context.Tag("kern/kernel/ToolExecutor")<ToolExecutor, {
  /** Runs one tool call through the seven steps. Never fails: every failure is an error ToolResult. */
  readonly execute: (
    toolId: string,
    args: unknown,
    options?: ExecuteOptions
  ) => Effect.Effect<ToolResult, never, RunContext>
  /** `execute` for a caller that holds its run's context: nothing to provide per call. */
  readonly executeIn: (
    run: RunContextData,
    toolId: string,
    args: unknown,
    options?: ExecuteOptions
  ) => Effect.Effect<ToolResult>
}>() {}

export const make = Effect.gen(function*() {
  const registry = yield* ToolRegistry
  const policy = yield* ToolPolicy
  const gate = yield* ApprovalGate
  const eventLog = yield* EventLog
  const baselines = yield* ContractBaselineStore
  const { contractEnforcement, surface } = yield* ExecutorSettings
  const { secrets } = yield* KnownSecrets

  const { recordCall } = makeToolMetrics()
  const checkContract = makeContractCheck(contractEnforcement, surface, baselines)

  /** The call's result, and its event and metrics: the one way every call ends, refused, failed or done. */
  const finish = (call: Call, tool: RegisteredTool | undefined, checked: Checked | undefined, raw: CallEnd) =>
    checked !== undefined && Fiber.isFiber(checked)
      ? Effect.flatMap(Fiber.join(checked), (check) => finishChecked(call, tool, check, raw))
      : finishChecked(call, tool, checked, raw)

  const finishChecked = (call: Call, tool: RegisteredTool | undefined, check: ContractCheck | undefined, raw: CallEnd) => {
    // A secret in a result is hidden before anyone (model, session, audit log) sees it; under STRICT, anything
    // shaped like a credential too.
    const known = secrets.length === 0 ? raw : redactEnd(raw)
    const end = strict(call.ctx) ? redactShapes(known) : known
    const latencyMs = call.clock.unsafeCurrentTimeMillis() - call.startedAt
    // A traced call is identified by its span; any other gets a random id of the same shape (drawn at once from
    // Effect's own Random, through randomHex from any other).
    const spanId = end.spanId ?? randomHexNow(Context.get(call.fiber.currentDefaultServices, Random.Random), 16)
    return spanId === undefined
      ? Effect.flatMap(randomHex(16), (spanId) => conclude(call, tool, check, end, latencyMs, spanId))
      : conclude(call, tool, check, end, latencyMs, spanId)
  }

  const redactEnd = (end: CallEnd): CallEnd => ({
    ...end,
    data: redactSecrets(end.data, secrets),
    ...(end.errorMessage === undefined ? {} : { errorMessage: redactSecretsInText(end.errorMessage, secrets) })
  })

  /** STRICT, from the policy or the run: seed 002's redaction intent. */
  const strict = (ctx: RunContextData) => policy.rules.mode === "strict" || ctx.safetyMode === "STRICT"

  const redactShapes = (end: CallEnd): CallEnd => ({
    ...end,
    data: redactCredentialShapesIn(end.data),
    ...(end.errorMessage === undefined ? {} : { errorMessage: redactCredentialShapes(end.errorMessage) })
  })

  const conclude = (
    call: Call,
    tool: RegisteredTool | undefined,
    check: ContractCheck | undefined,
    end: CallEnd,
    latencyMs: number,
    spanId: string
  ) => {
    const { ctx } = call
    const result = knownToolResult({
      callId: `call_${spanId}`,
      toolId: call.toolId,
      success: end.success,
      data: end.data ?? null,
      ...(end.errorCode === undefined ? {} : { errorCode: end.errorCode }),
      ...(end.errorMessage === undefined ? {} : { errorMessage: end.errorMessage }),
      latencyMs,
      retries: end.retries ?? 0,
      traceId: ctx.traceId,
      spanId
    })
    const ran = end.decisionKey === undefined
    // Every call is audited, refused or run: emitTrace turns off spans only, never the audit trail.
    const audited = eventLog.enabled
    // The budget and the metrics first, at once: they are the call's own (no Effect step), then the log line and the
    // audit record.
    const status = end.errorCode ?? "OK"
    const fiberLabels = call.fiber.getFiberRef(FiberRef.currentMetricLabels)
    // A refused call took no budget and ran nothing; it is counted, without a latency.
    if (!ran) recordCall(fiberLabels, call.toolId, status)
    else {
      ctx.budget.addLatencyMsNow(latencyMs)
      if (tool?.spec.emitMetric === true) recordCall(fiberLabels, call.toolId, status, latencyMs)
    }
    // The audit record first, in the journal before the result goes back (a kill -9 then keeps it), at the call's end
    // by its own Clock, with no Effect step.
    if (audited) {
      eventLog.recordAt({
        runId: ctx.runId,
        traceId: ctx.traceId,
        sessionId: ctx.sessionId,
        toolId: call.toolId,
        argsDigest: argsDigest(call.args),
        ...(tool === undefined ? {} : { registeredFingerprint: tool.registeredFingerprint }),
        ...(check === undefined
          ? {}
          : {
            contractFingerprint: check.fingerprint,
            contractStatus: check.status,
            contractEnforcement,
            contractMismatch: check.mismatch
          }),
        decisionKey: end.decisionKey ?? "kernel.tool.dispatch",
        status: ran ? (end.success ? "ok" : "error") : "denied",
        errorCode: end.errorCode ?? null,
        errorMessage: end.errorMessage ?? null,
        latencyMs,
        retries: end.retries ?? 0,
        ...(end.approvedBy === undefined && end.detail === undefined
          ? {}
          : { detail: JSON.stringify({ ...end.detail, ...(end.approvedBy === undefined ? {} : { approvedBy: end.approvedBy }) }) })
      }, call.startedAt + latencyMs)
    }
    const logged = logToolCall(call.fiber.getFiberRef(FiberRef.currentMinimumLogLevel), {
      toolId: call.toolId,
      outcome: toolOutcome({ refused: !ran, success: end.success, errorCode: end.errorCode }),
      durationMs: latencyMs,
      args: call.args,
      errorCode: end.errorCode,
      errorMessage: end.errorMessage,
      retries: end.retries ?? 0,
      approvedBy: end.approvedBy
    }, secrets)
    if (call.span !== undefined) toolCallSpanEnd(call.span, { ...end, ...(tool === undefined ? {} : { safetyClass: tool.spec.safetyClass }) }, latencyMs)
    return logged === undefined ? Effect.succeed(result) : Effect.as(logged, result)
  }

  /** A call refused before it ran. */
  const refuse = (
    call: Call,
    decisionKey: RefusalKey,
    deniedBy: DeniedBy,
    errorCode: ToolErrorCode,
    errorMessage: string,
    tool?: RegisteredTool,
    check?: Checked,
    detail?: Readonly<Record<string, unknown>>
  ) => finish(call, tool, check, { decisionKey, deniedBy, success: false, errorCode, errorMessage, ...(detail === undefined ? {} : { detail }) })

  /**
   * Whether a run may be told a tool exists: one its turn offers, its sub-agent was given and its user's scope allows.
   * An unknown tool's error lists only these, so a paired user's or a sub-agent's model learns no more than it was offered.
   */
  const visibleTo = (ctx: RunContextData, toolId: string): boolean => {
    if (ctx.offered !== undefined && !ctx.offered.has(toolId)) return false
    if (ctx.delegation !== undefined && !ctx.delegation.tools.has(toolId)) return false
    if (ctx.toolScope === undefined) return true
    const tool = registry.lookup(toolId)
    return tool !== undefined && allowsTool(ctx.toolScope, tool.spec)
  }

  /**
   * Where a tracer keeps spans (spansKept.ts), a traced tool's call (and a call to no tool) runs in a `kern.tool.call`
   * span, its attempts' spans and an approval's below it; the span says at the end what the kernel decided and how the
   * call ended (toolSpan.ts).
   */
  const executeIn = (ctx: RunContextData, toolId: string, args: unknown, options: ExecuteOptions = {}) =>
    Effect.withFiberRuntime<ToolResult>((fiber) => start(fiber, ctx, toolId, args, options))

  /** 1. Lookup, and the call's span where one is kept; read from the calling fiber, with no Effect step. */
  const start = (
    fiber: Fiber.RuntimeFiber<unknown, unknown>,
    ctx: RunContextData,
    toolId: string,
    args: unknown,
    options: ExecuteOptions
  ) => {
    const tool = registry.lookup(toolId)
    // Spans only where a tracer keeps them (an exporter is on): with Effect's own tracer they would go nowhere.
    // The span is handed down rather than made the fiber's current one (a context copy per call): the attempts and the
    // approval, its children, are parented to it explicitly.
    if ((tool === undefined || tool.spec.emitTrace) && keepsSpans(fiber.currentTracer)) {
      return Effect.useSpan("kern.tool.call", toolCallSpanStart(ctx, toolId, tool?.spec, args), (span) =>
        looked(fiber, ctx, toolId, tool, args, options, span, true))
    }
    return looked(fiber, ctx, toolId, tool, args, options, undefined, false)
  }

  const looked = (
    fiber: Fiber.RuntimeFiber<unknown, unknown>,
    ctx: RunContextData,
    toolId: string,
    tool: RegisteredTool | undefined,
    args: unknown,
    options: ExecuteOptions,
    span: Tracer.Span | undefined,
    traced: boolean
  ): Effect.Effect<ToolResult> => {
    const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
    const call: Call = { toolId, args, ctx, fiber, clock, startedAt: clock.unsafeCurrentTimeMillis(), span, traced }
    if (tool === undefined) {
      return Effect.flatMap(registry.listIds, (known) =>
        refuse(
          call,
          "kernel.tool.dispatch",
          "unknown_tool",
          "NOT_FOUND",
          `unknown tool "${toolId}"; available tools: ${known.filter((id) => visibleTo(ctx, id)).join(", ") || "(none)"}`
        ))
    }
    // 2. Contract, per contractEnforcement: an Effect only when a baseline must be consulted.
    const check = checkContract(tool)
    if (!Effect.isEffect(check)) return authorize(call, tool, check, options)
    // Only enforce denies on a baseline; under observe the comparison (a kern.db query) informs the audit record
    // alone, so it runs while the call does and the record waits for it.
    return contractEnforcement === "enforce"
      ? Effect.flatMap(check, (checked) => authorize(call, tool, checked, options))
      : Effect.flatMap(Effect.fork(check), (pending) => authorize(call, tool, pending, options))
  }

  /** 3. Policy, and approval where the policy asks for it; then the budget and the run. */
  const authorize = (call: Call, tool: RegisteredTool, check: Checked, options: ExecuteOptions) => {
    const deny = Fiber.isFiber(check) ? undefined : check.deny
    if (deny !== undefined) return refuse(call, "kernel.tool.policy.blocked", "contract", "PERMISSION_DENIED", deny, tool, check)
    const leak = secretRefusal(tool.spec, call.args, secrets)
    if (leak !== undefined) return refuse(call, "kernel.tool.policy.blocked", "secret_guard", "PERMISSION_DENIED", leak, tool, check)
    const { ctx } = call
    const spec = tool.spec
    // The run's user's scope (a paired user's), whatever the model was told or offered.
    if (ctx.toolScope !== undefined && !allowsTool(ctx.toolScope, spec)) {
      const who = ctx.userSid === "" ? "this run" : `user ${ctx.userSid}`
      const has = ctx.toolScope === "none" ? "may use no tools" : `has tool scope ${ctx.toolScope}`
      return refuse(
        call,
        "kernel.tool.policy.blocked",
        "scope",
        "PERMISSION_DENIED",
        `${spec.toolId} needs tool scope ${requiredScope(spec)}; ${who} ${has}`,
        tool,
        check,
        { userId: ctx.userSid, toolScope: ctx.toolScope, ...(ctx.origin === undefined ? {} : { interface: ctx.origin.interface }) }
      )
    }
    // A sub-agent's tools: those its parent turn gave it, whatever the model calls by name.
    if (ctx.delegation !== undefined && !ctx.delegation.tools.has(spec.toolId)) {
      return refuse(
        call,
        "kernel.tool.policy.blocked",
        "delegation",
        "PERMISSION_DENIED",
        `${spec.toolId} is not among the tools this sub-agent was given (no more than its parent turn was offered)`,
        tool,
        check,
        { userId: ctx.userSid, delegationDepth: ctx.delegation.depth, delegatedTools: [...ctx.delegation.tools] }
      )
    }
    const decision = policy.decide({ spec, args: call.args, agentName: ctx.agentName, safetyMode: ctx.safetyMode, origin: ctx.origin })
    return Effect.isEffect(decision)
      ? Effect.flatMap(decision, (decided) => gateOrRun(call, tool, check, options, decided))
      : gateOrRun(call, tool, check, options, decision)
  }

  /** Runs what the policy allows; asks the gate about what needs approval. */
  const gateOrRun = (call: Call, tool: RegisteredTool, check: Checked, options: ExecuteOptions, decision: PolicyDecision) => {
    const { ctx } = call
    const spec = tool.spec
    if (decision._tag === "Deny") {
      return refuse(call, "kernel.tool.policy.blocked", "policy", "PERMISSION_DENIED", decision.reason, tool, check)
    }
    if (decision._tag === "Allow") return reserve(call, tool, check, options, undefined)
    const request = {
      spec,
      args: call.args,
      reason: decision.reason,
      runId: ctx.runId,
      agentName: ctx.agentName,
      userSid: ctx.userSid,
      traceId: ctx.traceId,
      sessionId: ctx.sessionId,
      origin: ctx.origin
    }
    const asked = call.span === undefined ? gate.request(request) : Effect.withParentSpan(gate.request(request), call.span)
    return Effect.flatMap(asked, (answer) =>
      answer.approved
        ? reserve(call, tool, check, options, answer.by)
        : refuse(
          call,
          "kernel.tool.policy.blocked",
          "approval",
          "PERMISSION_DENIED",
          `${decision.reason} and needs approval, which was refused (${answer.by}: ${answer.reason})`,
          tool,
          check
        ))
  }

  /** 4. Budget: one call reserved atomically, so parallel calls never overshoot. Then 5.–7. */
  const reserve = (
    call: Call,
    tool: RegisteredTool,
    check: Checked,
    options: ExecuteOptions,
    approvedBy: string | undefined
  ) => {
    const reservation = call.ctx.budget.reserveToolCallNow()
    if (!reservation.granted) {
      const message = `the run's budget is used up (${reservation.cap} reached)`
      return refuse(call, "kernel.budget.exceeded", "budget", "BUDGET_EXCEEDED", message, tool, check)
    }
    // 5. Handler, 6. arguments: argument schemas are synchronous, decoded outside the fiber interpreter.
    const handler = options.overrideFn ?? tool.handler
    const decoded = decodeToolArgs(tool.spec.toolId, tool.parameters, tool.spec.argsJsonSchema ?? {}, call.args)
    const ended = (outcome: Either.Either<unknown, ToolFailure>, attempts: number, spanId?: string) =>
      finish(call, tool, check, {
        spanId,
        success: Either.isRight(outcome),
        data: Either.getOrUndefined(outcome),
        ...(Either.isLeft(outcome) ? { errorCode: outcome.left.code, errorMessage: outcome.left.message } : {}),
        retries: Math.max(0, attempts - 1),
        ...(approvedBy === undefined ? {} : { approvedBy })
      })
    if (Either.isLeft(decoded)) {
      return ended(Either.left(new ToolFailure({ code: "VALIDATION_ERROR", message: decoded.left, retryable: false })), 0)
    }
    // 7. Run with timeout and retries.
    return runAttempts(tool, handler, decoded.right, call.ctx, call.traced, call.span, ({ attempts, outcome, spanId }) =>
      ended(outcome, attempts, spanId))
  }

  return ToolExecutor.of({
    execute: (toolId, args, options = {}) =>
      Effect.withFiberRuntime<ToolResult, never, RunContext>((fiber) =>
        start(fiber, Context.get(fiber.currentContext as Context.Context<RunContext>, RunContext), toolId, args, options)),
    executeIn
  })
})

export const layer = Layer.effect(ToolExecutor, make)
