import { Effect, type Tracer } from "effect"
import { keepsSpans } from "./spansKept.js"

/**
 * `Effect.withSpan(name, options)` where the fiber's spans are kept (spansKept.ts: an exporter's tracer, a test's),
 * and the effect as it is where they go nowhere (Effect's own tracer, no collector configured): no span, no stack
 * captured, no copy of the fiber's context (~50 services in an agent) with the span as its parent. A turn passes
 * through a dozen of kern's spans, each ~10-20 µs of CPU made for nobody. A kept span captures no stack trace: its
 * call site would be this helper's.
 */
export const keptSpan = (name: string, options?: Tracer.SpanOptions) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => keptSpanOf(name, options, () => self)

/**
 * `keptSpan(name, options)` of the effect `make` returns, made when the effect runs (each time it runs): the span's
 * decision and whatever `make` reads (a call's live connection) in one step, with no Effect.suspend or read of its own.
 */
export const keptSpanOf = <A, E, R>(
  name: string,
  options: Tracer.SpanOptions | undefined,
  make: () => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime<A, E, R>((fiber) => {
    const self = make()
    return keepsSpans(fiber.currentTracer) ? Effect.withSpan(self, name, { ...options, captureStackTrace: false }) : self
  })

/**
 * `Effect.annotateCurrentSpan(attributes())` where spans are kept; nothing where they are not (with no span to
 * annotate, Effect's would build and drop a NoSuchElementException each time).
 */
export const annotateKeptSpan = (attributes: () => Record<string, unknown>): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => keepsSpans(fiber.currentTracer) ? Effect.annotateCurrentSpan(attributes()) : Effect.void)
