import type { ToolScope } from "../config/schema.js"
import type { ToolSpec } from "./contracts.js"

const scopeRank: Record<ToolScope, number> = { read: 0, write: 1, full: 2 }

/** Whether `scope` covers `required` (read ⊂ write ⊂ full). */
export const scopeCovers = (scope: ToolScope, required: ToolScope): boolean => scopeRank[required] <= scopeRank[scope]

/** The smaller of two scopes. */
export const narrowerScope = (a: ToolScope, b: ToolScope): ToolScope => scopeRank[a] <= scopeRank[b] ? a : b

/** The risk tag that carries the scope a tool needs. */
export const scopeTag = (scope: ToolScope) => `scope:${scope}`

/**
 * The scope a registered tool needs, from its `scope:<level>` risk tag. A tool registered without one (an embedding
 * app's) needs `full`: a paired user never reaches a tool nobody classified.
 */
export const requiredScope = (spec: Pick<ToolSpec, "riskTags">): ToolScope => {
  for (const tag of spec.riskTags) {
    if (tag === "scope:read") return "read"
    if (tag === "scope:write") return "write"
    if (tag === "scope:full") return "full"
  }
  return "full"
}

/** A run's limit on tools: a scope, or `none` for a run whose user may use no tool at all. */
export type RunToolScope = ToolScope | "none"

export const allowsTool = (limit: RunToolScope, spec: Pick<ToolSpec, "riskTags">): boolean =>
  limit !== "none" && scopeCovers(limit, requiredScope(spec))
