import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { annotateKeptSpan, keptSpan, keptSpanOf } from "../../src/kernel/keptSpan.js"
import { recordingTracer } from "../support/recordingTracer.js"

/** What runs inside sees as its span: its name, or none. */
const spanSeen = Effect.map(Effect.option(Effect.currentSpan), Option.map((span) => span.name))

describe("keptSpan", () => {
  it.effect("where a tracer keeps spans: the span, its attributes, the parent of what runs inside, annotated", () =>
    Effect.gen(function*() {
      const { spans, tracer } = recordingTracer()
      const seen = yield* spanSeen.pipe(
        Effect.zipLeft(annotateKeptSpan(() => ({ "kern.answer": 42 }))),
        keptSpan("kern.test.kept", { attributes: { sessionId: "s1" } }),
        Effect.withTracer(tracer)
      )
      expect(seen).toEqual(Option.some("kern.test.kept"))
      expect(spans.map((span) => span.name)).toEqual(["kern.test.kept"])
      expect(Object.fromEntries(spans[0]!.attributes)).toEqual({ sessionId: "s1", "kern.answer": 42 })
      expect(spans[0]!.ended).toBe(true)
    }))

  it.effect("under Effect's own tracer (no collector): no span is made, the effect runs as it is", () =>
    Effect.gen(function*() {
      let attributesAsked = false
      const seen = yield* spanSeen.pipe(
        Effect.zipLeft(annotateKeptSpan(() => {
          attributesAsked = true
          return {}
        })),
        keptSpan("kern.test.dropped")
      )
      expect(seen).toEqual(Option.none())
      expect(attributesAsked).toBe(false)
    }))

  it.effect("a failure passes through either way", () =>
    Effect.gen(function*() {
      const { tracer } = recordingTracer()
      expect(yield* Effect.flip(keptSpan("kern.test.failing")(Effect.fail("no")))).toBe("no")
      expect(yield* Effect.flip(keptSpan("kern.test.failing")(Effect.fail("no")).pipe(Effect.withTracer(tracer)))).toBe("no")
    }))

  it.effect("keptSpanOf makes its effect each time it runs, not before, in the span where one is kept", () =>
    Effect.gen(function*() {
      const { spans, tracer } = recordingTracer()
      let made = 0
      const effect = keptSpanOf("kern.test.made", { attributes: { tool: "t" } }, () => {
        made += 1
        return spanSeen
      })
      expect(made).toBe(0)
      expect(yield* effect).toEqual(Option.none())
      expect(yield* effect.pipe(Effect.withTracer(tracer))).toEqual(Option.some("kern.test.made"))
      expect(made).toBe(2)
      expect(spans.map((span) => [span.name, Object.fromEntries(span.attributes)])).toEqual([["kern.test.made", { tool: "t" }]])
    }))
})
