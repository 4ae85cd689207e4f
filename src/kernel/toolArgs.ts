import { JSONSchema, Schema } from "effect"
import { ToolArgSchema } from "./contracts.js"

/** The argument Schema a spec's `argsSchema` declarations describe, for tools registered without one. */
export const parametersFromArgs = (
  args: ReadonlyArray<ToolArgSchema>
): Schema.Schema<Record<string, unknown>, Record<string, unknown>> => {
  const field = (arg: ToolArgSchema): Schema.Schema.Any => {
    const base = {
      string: Schema.String,
      number: Schema.Number,
      integer: Schema.Int,
      boolean: Schema.Boolean,
      object: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
      array: Schema.Array(Schema.Unknown),
      any: Schema.Unknown
    }[arg.type]
    return arg.description === "" ? base : base.annotations({ description: arg.description })
  }
  const fields: Record<string, Schema.Struct.Field> = {}
  for (const arg of args) fields[arg.name] = arg.required ? field(arg) : Schema.optional(field(arg))
  return Schema.Struct(fields) as unknown as Schema.Schema<Record<string, unknown>, Record<string, unknown>>
}

const jsonTypes: ReadonlySet<string> = new Set(["string", "number", "integer", "boolean", "object", "array"])

interface JsonSchemaObject {
  readonly type?: unknown
  readonly description?: unknown
  readonly properties?: Record<string, JsonSchemaObject>
  readonly required?: ReadonlyArray<string>
  readonly $ref?: string
  readonly $defs?: Record<string, JsonSchemaObject>
}

/**
 * The declarations (name, type, required, description) of an argument Schema, so a tool described by an Effect
 * Schema has the same governed contract (and fingerprint) as one declared field by field.
 */
export const argsFromParameters = (parameters: Schema.Schema.AnyNoContext): ReadonlyArray<ToolArgSchema> => {
  const root = JSONSchema.make(parameters) as JsonSchemaObject
  const resolved = typeof root.$ref === "string" ? root.$defs?.[root.$ref.split("/").pop() ?? ""] ?? root : root
  const required = new Set(resolved.required ?? [])
  return Object.entries(resolved.properties ?? {}).map(([name, property]) =>
    ToolArgSchema.make({
      name,
      type: typeof property.type === "string" && jsonTypes.has(property.type)
        ? (property.type as ToolArgSchema["type"])
        : "any",
      required: required.has(name),
      description: typeof property.description === "string" ? property.description : ""
    })
  )
}
