import { Tool, Toolkit } from "@effect/ai"
import { JSONSchema, Schema } from "effect"
import type { RegisteredTool } from "./ToolRegistry.js"

/** Provider function names allow letters, digits, `_` and `-`: a dotted tool id travels with `__` for its dots. */
export const modelToolName = (toolId: string): string => toolId.replace(/\./g, "__")

/**
 * The fields the model is shown for a tool: each carries the JSON Schema of the real argument, but decodes
 * anything. The model's arguments are checked by the executor (a VALIDATION_ERROR result the model can read),
 * not by the stream decoder (which would end the turn).
 */
type Json = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** Replaces `$ref`s into `$defs` with the definitions and folds one-element `allOf`s: providers want it flat. */
const inline = (value: unknown, defs: Json, depth = 0): unknown => {
  if (Array.isArray(value)) return value.map((item) => inline(item, defs, depth))
  if (!isObject(value) || depth > 32) return value
  const { $ref, allOf, ...rest } = value
  let out: Json = Object.fromEntries(Object.entries(rest).map(([key, inner]) => [key, inline(inner, defs, depth + 1)]))
  if (typeof $ref === "string") {
    const target = defs[$ref.replace("#/$defs/", "")]
    if (isObject(target)) out = { ...(inline(target, defs, depth + 1) as Json), ...out }
  }
  if (Array.isArray(allOf) && allOf.length === 1) {
    out = { ...(inline(allOf[0], defs, depth + 1) as Json), ...out }
  } else if (Array.isArray(allOf)) {
    out = { ...out, allOf: allOf.map((item) => inline(item, defs, depth + 1)) }
  }
  return out
}

const permissiveFields = (parameters: Schema.Schema<unknown, unknown>): Schema.Struct.Fields => {
  const raw: unknown = JSONSchema.make(parameters)
  const defs = isObject(raw) && isObject(raw["$defs"]) ? raw["$defs"] : {}
  const json = inline(raw, defs) as {
    readonly properties?: Record<string, JSONSchema.JsonSchema7>
    readonly required?: ReadonlyArray<string>
  }
  const required = new Set(json.required ?? [])
  const fields: Record<string, Schema.Struct.Field> = {}
  for (const [name, shown] of Object.entries(json.properties ?? {})) {
    const field = Schema.Unknown.annotations({ jsonSchema: shown })
    fields[name] = required.has(name) ? field : Schema.optional(field)
  }
  return fields
}

/** A registered tool as @effect/ai offers it to a model (results are whatever the executor returns). */
export const toAiTool = (tool: RegisteredTool) =>
  Tool.make(modelToolName(tool.spec.toolId), {
    description: tool.spec.description,
    parameters: permissiveFields(tool.parameters),
    success: Schema.Unknown,
    failure: Schema.Unknown,
    failureMode: "return"
  })

/** A toolkit of registered tools, and the way back from a model's function name to the tool id. */
export const toolkitFor = (tools: ReadonlyArray<RegisteredTool>) => {
  const byName = new Map(tools.map((tool) => [modelToolName(tool.spec.toolId), tool.spec.toolId]))
  return {
    toolkit: Toolkit.make(...tools.map(toAiTool)),
    toolIdOf: (name: string): string | undefined => byName.get(name)
  }
}
