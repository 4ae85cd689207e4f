import { Tool } from "@effect/ai"
import { Either, JSONSchema, Schema } from "effect"
import { type JsonTextError, jsonValueDepthExceeded, parseJsonBounded } from "../config/json.js"
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

export type Json = { readonly [key: string]: unknown }

export const isJsonObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Replaces `$ref`s into `$defs` with the definitions and folds one-element `allOf`s. */
const inline = (value: unknown, defs: Json, depth = 0): unknown => {
  if (Array.isArray(value)) return value.map((item) => inline(item, defs, depth))
  if (!isJsonObject(value) || depth > 32) return value
  const { $ref, allOf, ...rest } = value
  let out: Json = Object.fromEntries(Object.entries(rest).map(([key, inner]) => [key, inline(inner, defs, depth + 1)]))
  if (typeof $ref === "string") {
    const target = defs[$ref.replace("#/$defs/", "")]
    if (isJsonObject(target)) out = { ...(inline(target, defs, depth + 1) as Json), ...out }
  }
  if (Array.isArray(allOf) && allOf.length === 1) {
    out = { ...(inline(allOf[0], defs, depth + 1) as Json), ...out }
  } else if (Array.isArray(allOf)) {
    out = { ...out, allOf: allOf.map((item) => inline(item, defs, depth + 1)) }
  }
  return out
}

/**
 * The JSON Schema of a tool's arguments, flat (no `$ref`, no `$defs`, no `$schema`): what the model is shown and
 * what the contract fingerprint covers. Flat, so renaming a Schema's identifier changes neither.
 */
export const argsJsonSchema = (parameters: Schema.Schema.AnyNoContext): Json => {
  const raw: unknown = JSONSchema.make(parameters)
  const defs = isJsonObject(raw) && isJsonObject(raw["$defs"]) ? raw["$defs"] : {}
  const flat = inline(raw, defs)
  if (!isJsonObject(flat)) return {}
  const { $defs: _defs, $schema: _schema, ...rest } = flat
  return rest
}

const jsonTypes: ReadonlySet<string> = new Set(["string", "number", "integer", "boolean", "object", "array"])

/**
 * The declarations (name, type, required, description) in an argument JSON Schema, so a tool described by an
 * Effect Schema has the same declared arguments as one declared field by field.
 */
export const argsFromJsonSchema = (schema: Json): ReadonlyArray<ToolArgSchema> => {
  const properties = isJsonObject(schema["properties"]) ? schema["properties"] : {}
  const required = new Set(Array.isArray(schema["required"]) ? schema["required"] : [])
  return Object.entries(properties).map(([name, property]) => {
    const type = isJsonObject(property) ? property["type"] : undefined
    const description = isJsonObject(property) ? property["description"] : undefined
    return ToolArgSchema.make({
      name,
      type: typeof type === "string" && jsonTypes.has(type) ? (type as ToolArgSchema["type"]) : "any",
      required: required.has(name),
      description: typeof description === "string" ? description : ""
    })
  })
}

/**
 * Where a model's tool-call arguments that are not a JSON object travel, as the model wrote them: the providers
 * put them under this key, so the call reaches the executor (a VALIDATION_ERROR the model can read and recover
 * from) instead of failing the model's response and ending the turn.
 */
export const rawArgumentsKey = "__kern_raw_arguments"

/** A model's argument text as call parameters: the object it holds, or the text under `rawArgumentsKey`. */
export const toolCallParams = (text: string): Json => {
  // No argument text is no arguments (some servers send "" for a tool without parameters).
  if (text.trim() === "") return {}
  const parsed = parseJson(text)
  return Either.isRight(parsed) && isJsonObject(parsed.right) ? parsed.right : { [rawArgumentsKey]: text }
}

/** The argument text a model sent, when it was not a JSON object. */
export const rawArgumentsOf = (args: unknown): string | undefined => {
  const raw = isJsonObject(args) ? args[rawArgumentsKey] : undefined
  return typeof raw === "string" ? raw : undefined
}

/**
 * JSON text to a value with @effect/ai's secure parser (the one its providers use): text that would set
 * `__proto__` or `constructor.prototype` is refused like invalid JSON, and so is text nested deeper than
 * `maxJsonDepth` (a model's arguments nested thousands deep would overflow the walks after the parse).
 */
export const parseJson = (text: string): Either.Either<unknown, JsonTextError> =>
  parseJsonBounded(text, { parse: Tool.unsafeSecureJsonParse })

/**
 * The opening of a value along `path`, as JSON text: `{"path": [[[…` down to the part nested too deep. It stands for
 * arguments a provider parsed itself that were nested too deep to pass on, and fails `parseJson` on the same depth.
 */
const openingAlong = (value: unknown, path: ReadonlyArray<string | number>): string => {
  let text = ""
  let current = value
  for (const key of path) {
    if (Array.isArray(current)) {
      text += key === 0 ? "[" : "[…, "
      current = current[Number(key)]
    } else {
      text += `{${JSON.stringify(String(key))}: `
      current = isJsonObject(current) ? current[String(key)] : undefined
    }
  }
  return `${text}${Array.isArray(current) ? "[" : "{"}…`
}

/**
 * Call parameters a provider already parsed (Anthropic's), bounded as argument text is: nested deeper than
 * `maxJsonDepth`, they travel as the opening of their deepest path under `rawArgumentsKey`, for the executor to
 * answer with a VALIDATION_ERROR naming the depth; the value itself would overflow the recursive walks after it.
 */
export const boundedToolParams = (params: unknown): unknown => {
  const path = jsonValueDepthExceeded(params)
  return path === undefined ? params : { [rawArgumentsKey]: openingAlong(params, path) }
}
