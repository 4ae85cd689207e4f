import { Clock, Context, Effect, Layer, Option } from "effect"
import pkg from "../../package.json" with { type: "json" }

/** The conversation the agent is in: its id and how big it is. */
export interface SessionFigures {
  readonly id: string
  readonly messages: number
  /** Bytes of the messages as JSON. */
  readonly bytes: number
}

/** The context of the last model call, in tokens (src/context/breakdown.ts ContextBreakdown). */
export interface ContextFigures {
  readonly maxContextTokens: number
  readonly system: number
  readonly tools: number
  readonly summary: number
  readonly raw: number
  readonly total: number
  /** The first message sent raw, and the session's messages. */
  readonly cut: number
  readonly messages: number
  /** Summaries in `<conversation_summary>`. */
  readonly summaries: number
}

/** Where live figures come from; the running agent supplies them, a one-shot command has none. */
export interface RuntimeSources {
  readonly session?: Effect.Effect<Option.Option<SessionFigures>>
  readonly context?: Effect.Effect<Option.Option<ContextFigures>>
  readonly queueLength?: Effect.Effect<number>
  readonly version?: string
}

export interface RuntimeInfoService {
  readonly version: string
  /** Clock time when the runtime started, in milliseconds. */
  readonly startedAtMs: number
  readonly uptimeMs: Effect.Effect<number>
  /** The active session, when the runtime has one. */
  readonly session: Effect.Effect<Option.Option<SessionFigures>>
  /** Messages waiting in the queue, when the runtime has a queue. */
  readonly queueLength: Effect.Effect<Option.Option<number>>
  /** The last model call's context, once there was one in this process. */
  readonly context: Effect.Effect<Option.Option<ContextFigures>>
}

/** What the `kern` tool reports about the process it runs in: version, start time and live figures. */
export class RuntimeInfo extends Context.Tag("kern/tools/RuntimeInfo")<RuntimeInfo, RuntimeInfoService>() {}

/** Starts the uptime clock now; live figures are read from `sources` on every call. */
export const make = (sources: RuntimeSources = {}): Effect.Effect<RuntimeInfoService> =>
  Effect.map(Clock.currentTimeMillis, (startedAtMs) => ({
    version: sources.version ?? pkg.version,
    startedAtMs,
    uptimeMs: Effect.map(Clock.currentTimeMillis, (now) => Math.max(0, now - startedAtMs)),
    session: sources.session ?? Effect.succeed(Option.none()),
    context: sources.context ?? Effect.succeed(Option.none()),
    queueLength: sources.queueLength === undefined ? Effect.succeed(Option.none()) : Effect.map(sources.queueLength, Option.some)
  }))

/** Uptime from when the layer is built, no live figures: for commands that do not run the agent loop. */
export const layer: Layer.Layer<RuntimeInfo> = Layer.effect(RuntimeInfo, make())

/**
 * The running agent's figures. The runtime builds this from its own services, e.g.
 * `layerWith(Effect.map(MessageQueue, (queue) => ({ queueLength: queue.size, session: … })))`.
 */
export const layerWith = <E, R>(sources: Effect.Effect<RuntimeSources, E, R>): Layer.Layer<RuntimeInfo, E, R> =>
  Layer.effect(RuntimeInfo, Effect.flatMap(sources, make))
