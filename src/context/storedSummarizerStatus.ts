import { Effect, Option } from "effect"
import type { KernConfig } from "../config/schema.js"
import { coveredEnd, rawWindowStart, type SegmentStoreError } from "./Segment.js"
import { SegmentStore } from "./SegmentStore.js"
import { healthOf, summarizerOf } from "./summarizerHealth.js"
import { type SummarizerStatus, summarizerStatus } from "./summarizerStatus.js"

/**
 * The summarizer's state as kern.db last recorded it, for `kern status` while the agent is not running: its health,
 * and for `session` (the newest) the messages no summary covers and whether its raw window was left past them.
 */
export const storedSummarizerStatus = (
  config: KernConfig,
  session: Option.Option<{ readonly id: string; readonly messages: number }>
): Effect.Effect<SummarizerStatus, SegmentStoreError, SegmentStore> =>
  Effect.gen(function*() {
    const store = yield* SegmentStore
    const health = healthOf(yield* store.getHealth, summarizerOf(config))
    if (Option.isNone(session)) {
      return summarizerStatus({ enabled: config.summaryBudget > 0, health, sessionId: null, messages: 0, coveredEnd: 0, fallback: false })
    }
    const { id, messages } = session.value
    const covered = coveredEnd(yield* store.list(id))
    const cut = yield* store.getCut(id)
    const rawStart = rawWindowStart(cut)
    return summarizerStatus({ enabled: config.summaryBudget > 0, health, sessionId: id, messages, coveredEnd: covered, fallback: rawStart > covered })
  }).pipe(Effect.withSpan("kern.context.summarizer.storedStatus"))
