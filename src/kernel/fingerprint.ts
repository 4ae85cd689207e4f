import { createHash } from "node:crypto"
import type { ToolSpec } from "./contracts.js"

/** JSON with object keys sorted at every depth and no whitespace: one text per value, whatever the key order. */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== "object") {
    const text = JSON.stringify(value)
    return text === undefined ? "null" : text
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).filter((key) => record[key] !== undefined).sort()
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(",")}}`
}

export const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex")

/**
 * The governed part of a contract: what a model and an operator rely on. Runtime knobs (retries, timeout, trace
 * and metric switches) and handlers are left out, so tuning them does not count as a contract change.
 */
export const contractFields = (spec: ToolSpec) => ({
  toolId: spec.toolId,
  name: spec.name,
  description: spec.description,
  safetyClass: spec.safetyClass,
  idempotent: spec.idempotent,
  argsSchema: spec.argsSchema.map((arg) => ({
    name: arg.name,
    type: arg.type,
    required: arg.required,
    description: arg.description
  })),
  returnsSchema: { type: spec.returnsSchema.type, description: spec.returnsSchema.description },
  requiresPermission: [...spec.requiresPermission],
  allowlistedAgents: [...spec.allowlistedAgents],
  requiredIdentityScopes: [...spec.requiredIdentityScopes],
  sideEffectLevel: spec.sideEffectLevel,
  riskTags: [...spec.riskTags]
})

/** `sha256:<hex>` of the canonical JSON of the contract fields. */
export const contractFingerprint = (spec: ToolSpec): string => `sha256:${sha256(canonicalJson(contractFields(spec)))}`

/** A digest of tool arguments for the audit log: the arguments themselves may hold secrets. */
export const argsDigest = (args: unknown): string => `sha256:${sha256(canonicalJson(args)).slice(0, 32)}`
