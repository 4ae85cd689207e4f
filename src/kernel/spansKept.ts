import { Effect, type Tracer } from "effect"

/**
 * Effect's own tracer: what a fiber has when nothing installed another (no OpenTelemetry exporter, no test tracer).
 * Its spans go nowhere, so a span made for it is work nobody reads.
 */
const effectsOwnTracer: Tracer.Tracer = Effect.runSync(Effect.tracer)

/**
 * Whether a fiber's spans are kept by someone, given its tracer (`fiber.currentTracer`): an exporter's tracer
 * (src/runtime/otelExport.ts) or any tracer a caller installed. The executor and the MCP client make a tool call's
 * spans only then; a span costs about as much as the rest of a trivial call. Read from the fiber, it takes no Effect step.
 */
export const keepsSpans = (tracer: Tracer.Tracer): boolean => tracer !== effectsOwnTracer
