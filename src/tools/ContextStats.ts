import { Effect, HashMap, Option, Ref } from "effect"

export interface ContextCounters {
  /** Tokens of the model's context at the turn's last step (the context window's count), 0 before any. */
  readonly activeContextTokens: number
  readonly compactions: number
  readonly savedByCompactionBytes: number
  readonly duplicates: number
  readonly savedByDuplicatesBytes: number
}

const zero: ContextCounters = {
  activeContextTokens: 0,
  compactions: 0,
  savedByCompactionBytes: 0,
  duplicates: 0,
  savedByDuplicatesBytes: 0
}

/** Tokens from bytes: about four bytes a token for English and code. */
export const estimateTokens = (bytes: number): number => Math.ceil(bytes / 4)

/** Per-session counters of the context's size and what compaction and duplicate replacement saved. */
export class ContextStats extends Effect.Service<ContextStats>()("kern/tools/ContextStats", {
  effect: Effect.gen(function*() {
    const counters = yield* Ref.make(HashMap.empty<string, ContextCounters>())
    const update = (sessionId: string, f: (current: ContextCounters) => ContextCounters) =>
      Ref.update(counters, (map) => HashMap.set(map, sessionId, f(Option.getOrElse(HashMap.get(map, sessionId), () => zero))))
    return {
      setActiveContextTokens: (sessionId: string, tokens: number) =>
        update(sessionId, (current) => ({ ...current, activeContextTokens: tokens })),
      recordCompaction: (sessionId: string, originalBytes: number, compactedBytes: number) =>
        update(sessionId, (current) => ({
          ...current,
          compactions: current.compactions + 1,
          savedByCompactionBytes: current.savedByCompactionBytes + Math.max(0, originalBytes - compactedBytes)
        })),
      recordDuplicate: (sessionId: string, originalBytes: number, referenceBytes: number) =>
        update(sessionId, (current) => ({
          ...current,
          duplicates: current.duplicates + 1,
          savedByDuplicatesBytes: current.savedByDuplicatesBytes + Math.max(0, originalBytes - referenceBytes)
        })),
      get: (sessionId: string) =>
        Effect.map(Ref.get(counters), (map) => Option.getOrElse(HashMap.get(map, sessionId), () => zero))
    } as const
  })
}) {}
