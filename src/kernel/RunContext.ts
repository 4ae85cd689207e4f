import { Clock, Context, Effect, Random, type Ref } from "effect"
import type { SafetyMode } from "../config/schema.js"
import type { RunOrigin } from "./ApprovalGate.js"
import type { Audience } from "./Audience.js"
import type { RunToolScope } from "./toolScope.js"
import { type BudgetLimitsInput, makeRunBudget, type RunBudget } from "./RunBudget.js"

export type LocaleCode = "en-US" | "en-IN" | "hi-IN"

/** The per-run envelope (seed 002): ids, budget, locale and safety mode. Provided per run, never as a global. */
export interface RunContextData {
  readonly runId: string
  readonly traceId: string
  readonly sessionId: string
  readonly userSid: string
  readonly agentName: string
  readonly intent: string
  readonly locale: LocaleCode
  readonly safetyMode: SafetyMode
  readonly budget: RunBudget
  readonly metadata: Readonly<Record<string, unknown>>
  /** Clock time at creation, in milliseconds. */
  readonly startedAtMs: number
  /** The channel the run's message came from: where an approval is asked. Absent outside a turn. */
  readonly origin?: RunOrigin | undefined
  /** The most the run's user may use (a paired user's scope, `none` for nobody's); absent: whatever is registered. */
  readonly toolScope?: RunToolScope | undefined
  /**
   * The first message of the session the model has raw in its context (the context's cut), kept current by the
   * turn: recall leaves out only what the model can already see. Absent outside a turn: the whole session.
   */
  readonly windowStart?: Ref.Ref<number> | undefined
  /** Whose conversation the run serves (Audience.ts): absent, the run sees everything, as the operator's does. */
  readonly audience?: Audience | undefined
  /**
   * The ids of the tools `tool_search` loaded in this turn: offered by name only until then, their definitions are
   * sent from the next step on. Absent outside a turn.
   */
  readonly loadedTools?: Ref.Ref<ReadonlySet<string>> | undefined
  /** The ids of the tools the turn offers the model (offeredTools.ts): what a sub-agent it spawns may be given at most. */
  readonly offered?: ReadonlySet<string> | undefined
  /** A sub-agent's run: its depth and the only tools it may call, whatever the model asks (the executor refuses the rest). */
  readonly delegation?: Delegation | undefined
}

/** What a sub-agent's run is limited to beyond its user's scope: the tools its parent turn gave it, and how deep it is. */
export interface Delegation {
  /** The sub-agent's id: its own work's reports (its sub-agents') come back to its conversation. */
  readonly id: number
  /** 1 for a sub-agent of a turn, 2 for a sub-agent's sub-agent, … */
  readonly depth: number
  readonly tools: ReadonlySet<string>
}

export class RunContext extends Context.Tag("kern/kernel/RunContext")<RunContext, RunContextData>() {}

export interface RunContextOptions {
  readonly sessionId?: string
  readonly userSid?: string
  readonly agentName?: string
  readonly intent?: string
  readonly locale?: LocaleCode
  readonly safetyMode?: SafetyMode
  readonly budget?: Partial<BudgetLimitsInput>
  readonly metadata?: Record<string, unknown>
  readonly origin?: RunOrigin
  readonly toolScope?: RunToolScope
  readonly windowStart?: Ref.Ref<number>
  readonly audience?: Audience
  readonly loadedTools?: Ref.Ref<ReadonlySet<string>>
  readonly delegation?: Delegation
}

const byteHex = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"))
const hex8 = (n: number) =>
  byteHex[(n >>> 24) & 0xff]! + byteHex[(n >>> 16) & 0xff]! + byteHex[(n >>> 8) & 0xff]! + byteHex[n & 0xff]!

/** `length` random hex digits (a multiple of 8, or less than 8), 32 bits per draw, from one read of Random. */
const hex = (length: number): Effect.Effect<string> =>
  Effect.randomWith((random) => {
    const draw = (digits: string): Effect.Effect<string> =>
      digits.length >= length
        ? Effect.succeed(digits.slice(0, length))
        : Effect.flatMap(random.nextIntBetween(0, 0x1_0000_0000), (n) => draw(digits + hex8(n)))
    return draw("")
  })

/** A fresh RunContext: `run_<16 hex>`, a 32-hex trace id, and a new budget; time and randomness from the services. */
export const makeRunContext = (options: RunContextOptions = {}): Effect.Effect<RunContextData> =>
  Effect.gen(function*() {
    return {
      runId: `run_${yield* hex(16)}`,
      traceId: yield* hex(32),
      sessionId: options.sessionId ?? "",
      userSid: options.userSid ?? "",
      agentName: options.agentName ?? "default",
      intent: options.intent ?? "",
      locale: options.locale ?? "en-US",
      safetyMode: options.safetyMode ?? "NORMAL",
      budget: yield* makeRunBudget(options.budget),
      metadata: options.metadata ?? {},
      startedAtMs: yield* Clock.currentTimeMillis,
      ...(options.origin === undefined ? {} : { origin: options.origin }),
      ...(options.toolScope === undefined ? {} : { toolScope: options.toolScope }),
      ...(options.audience === undefined ? {} : { audience: options.audience }),
      ...(options.windowStart === undefined ? {} : { windowStart: options.windowStart }),
      ...(options.loadedTools === undefined ? {} : { loadedTools: options.loadedTools }),
      ...(options.delegation === undefined ? {} : { delegation: options.delegation })
    }
  })

export const isSafeMode = (context: RunContextData): boolean => context.safetyMode !== "NORMAL"

export const elapsedMs = (context: RunContextData): Effect.Effect<number> =>
  Effect.map(Clock.currentTimeMillis, (now) => now - context.startedAtMs)

/** Random hex ids for calls and spans, from the Random service so tests can seed them. */
export const randomHex = hex

/** Effect's own Random: what a fiber has unless a caller installed another (a seeded one in a test). */
const effectsOwnRandom = Effect.runSync(Effect.random)

/**
 * randomHex for a caller holding its fiber's Random (`Context.get(fiber.currentDefaultServices, Random.Random)`): with
 * Effect's own, unseeded Random the digits are drawn at once, with no Effect step (a tool call's id, on every call);
 * with any other (a seeded test Random) undefined, and the caller runs randomHex, which draws from it.
 */
export const randomHexNow = (random: Random.Random, length: number): string | undefined => {
  if (random !== effectsOwnRandom) return undefined
  let digits = ""
  while (digits.length < length) digits += hex8((Math.random() * 0x1_0000_0000) >>> 0)
  return digits.slice(0, length)
}
