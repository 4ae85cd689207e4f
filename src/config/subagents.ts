import { Schema } from "effect"

const Count = (lowest: number) =>
  Schema.Int.pipe(Schema.between(lowest, 100)).annotations({ identifier: `an integer from ${lowest} to 100` })

/**
 * `subagents`: how many sub-agents (the spawn tool) may run at once, and how deep they may nest: depth 1 lets a turn
 * spawn sub-agents that cannot spawn themselves; 0 turns spawn off.
 */
export const SubagentsConfig = Schema.Struct({
  maxConcurrent: Schema.optionalWith(Count(1), { default: () => 3 }),
  maxDepth: Schema.optionalWith(Count(0), { default: () => 1 })
})
export type SubagentsConfig = typeof SubagentsConfig.Type

export const subagentsDefaults = (): SubagentsConfig => ({ maxConcurrent: 3, maxDepth: 1 })

export const subagentsExpectation =
  "an object { maxConcurrent?, maxDepth? } (sub-agents running at once, 1 to 100, default 3; how deep they nest, 0 to 100, default 1, 0 turns spawn off)"
