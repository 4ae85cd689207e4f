import { Effect, Schema } from "effect"
import { jsonProblem } from "./jsonValue.js"

export type MemoryTierName = "working" | "episodic" | "durable"

/** One remembered value (seed 002, MemoryEntry). */
export interface MemoryEntry {
  readonly key: string
  readonly value: unknown
  readonly tier: MemoryTierName
  /** Where the fact came from (a tool id, a user, a file). */
  readonly source: string
  readonly confidence: number
  readonly createdAtMs: number
  readonly ttlS: number | null
  /** `mem_<first three letters of the tier>_<key>`. */
  readonly entryId: string
}

export interface PutOptions {
  readonly source?: string
  readonly ttlS?: number
  readonly confidence?: number
}

export const entryId = (tier: MemoryTierName, key: string): string => `mem_${tier.slice(0, 3)}_${key}`

export const isExpired = (entry: Pick<MemoryEntry, "createdAtMs" | "ttlS">, nowMs: number): boolean =>
  entry.ttlS !== null && nowMs >= entry.createdAtMs + entry.ttlS * 1000

export class MemoryError extends Schema.TaggedError<MemoryError>()("MemoryError", {
  tier: Schema.String,
  key: Schema.String,
  message: Schema.String
}) {}

/** Memory holds JSON only: anything else is refused with what is wrong and where. */
export const validateValue = (tier: MemoryTierName, key: string, value: unknown): Effect.Effect<void, MemoryError> => {
  const problem = jsonProblem(value)
  return problem === undefined
    ? Effect.void
    : Effect.fail(new MemoryError({ tier, key, message: `${tier} memory "${key}": the value is not JSON (${problem})` }))
}
