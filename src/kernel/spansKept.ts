import { Effect, type Tracer } from "effect"

/**
 * Effect's own tracer: what a fiber has when nothing installed another (no OpenTelemetry exporter, no test tracer).
 * Its spans go nowhere, so a span made for it is work nobody reads.
 */
const effectsOwnTracer: Tracer.Tracer = Effect.runSync(Effect.tracer)

/**
 * Whether the current fiber's spans are kept by someone: an exporter's tracer (src/runtime/otelExport.ts) or any
 * tracer a caller installed. The executor makes a tool call's spans only then; a span costs about as much as the rest
 * of a trivial call.
 */
export const spansKept: Effect.Effect<boolean> = Effect.tracerWith((tracer) => Effect.succeed(tracer !== effectsOwnTracer))

/** spansKept for a tracer in hand (a fiber's `currentTracer`): the same answer with no Effect step. */
export const keepsSpans = (tracer: Tracer.Tracer): boolean => tracer !== effectsOwnTracer
