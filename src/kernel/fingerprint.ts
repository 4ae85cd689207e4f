import { Option, Schema } from "effect"
import * as NodeCrypto from "node:crypto"
import type { ToolSpec } from "./contracts.js"
import { argsJsonSchema, parametersFromArgs } from "./toolArgs.js"

/**
 * JSON with object keys sorted at every depth and no whitespace: one text per value, whatever the key order. Built by
 * appending to one string, with no array per value (every tool call's audit digest starts here).
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== "object") {
    const text = JSON.stringify(value)
    return text === undefined ? "null" : text
  }
  if (Array.isArray(value)) {
    let text = "["
    for (let i = 0; i < value.length; i++) {
      if (i > 0) text += ","
      // A hole is left empty, as join leaves it.
      if (i in value) text += canonicalJson(value[i])
    }
    return `${text}]`
  }
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).sort()
  let text = "{"
  for (const key of keys) {
    const inner = record[key]
    if (inner === undefined) continue
    if (text.length > 1) text += ","
    text += `${JSON.stringify(key)}:${canonicalJson(inner)}`
  }
  return `${text}}`
}

export const sha256: (text: string) => string = typeof NodeCrypto.hash === "function"
  ? (text) => NodeCrypto.hash("sha256", text, "hex")
  // Node before 20.12 has no one-shot hash.
  : (text) => NodeCrypto.createHash("sha256").update(text).digest("hex")

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

/** How an operator reads each governed field when it changed. */
const fieldLabels: Readonly<Record<string, string>> = {
  argsSchema: "input schema",
  argsJsonSchema: "input schema",
  returnsSchema: "result schema",
  safetyClass: "safety class",
  sideEffectLevel: "side-effect level",
  riskTags: "risk tags",
  requiresPermission: "required permissions",
  allowlistedAgents: "allowed agents",
  requiredIdentityScopes: "required scopes"
}

const decodeContractText = Schema.decodeUnknownOption(Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown })))

/** The canonical JSON of a spec's governed fields: what a baseline keeps to say later what changed. */
export const contractText = (spec: ToolSpec): string => canonicalJson(contractFields(spec))

/**
 * What differs between an approved contract (its `contractText`) and a spec, as an operator reads it:
 * `["description", "input schema"]`. Empty when the approved text is unknown or unreadable.
 */
export const contractChanges = (approved: string | null, spec: ToolSpec): ReadonlyArray<string> => {
  const before = approved === null ? Option.none() : decodeContractText(approved)
  if (Option.isNone(before)) return []
  const now: Record<string, unknown> = contractFields(spec)
  const keys = [...new Set([...Object.keys(before.value), ...Object.keys(now)])].sort()
  const changed = keys.filter((key) => canonicalJson(before.value[key]) !== canonicalJson(now[key]))
  return [...new Set(changed.map((key) => fieldLabels[key] ?? key))]
}
