import { createHash } from "node:crypto"
import type { ToolSpec } from "./contracts.js"
import { argsJsonSchema, parametersFromArgs } from "./toolArgs.js"

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

/** Lists whose order means nothing in a JSON Schema: which fields are required, which values a literal allows. */
const unorderedLists: ReadonlySet<string> = new Set(["required", "enum"])

/** A JSON Schema with its unordered lists sorted, so reordering a Struct's fields or a literal's values is no change. */
const normalizeSchema = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(normalizeSchema)
  if (value === null || typeof value !== "object") return value
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [
    key,
    unorderedLists.has(key) && Array.isArray(inner)
      ? inner.map((item) => ({ item, text: canonicalJson(item) }))
        .sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0))
        .map(({ item }) => item)
      : normalizeSchema(inner)
  ]))
}

/**
 * The governed part of a contract: what a model and an operator rely on. Runtime knobs (retries, timeout, trace
 * and metric switches) and handlers are left out, so tuning them does not count as a contract change. Descriptions
 * stay in (seed 002): they are what the model reads to decide what a tool does and how to call it, so rewording one
 * can change what the model does with the tool. The arguments' full JSON Schema is covered: a new literal value, a
 * pattern, integer for number or a nested field is a new contract.
 */
export const contractFields = (spec: ToolSpec) => ({
  toolId: spec.toolId,
  name: spec.name,
  description: spec.description,
  safetyClass: spec.safetyClass,
  idempotent: spec.idempotent,
  // By name: the order arguments are declared in is not part of what they mean.
  argsSchema: [...spec.argsSchema].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((arg) => ({
    name: arg.name,
    type: arg.type,
    required: arg.required,
    description: arg.description
  })),
  // A spec decoded outside the registry has no JSON Schema yet: its declarations describe the arguments.
  argsJsonSchema: normalizeSchema(spec.argsJsonSchema ?? argsJsonSchema(parametersFromArgs(spec.argsSchema))),
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
