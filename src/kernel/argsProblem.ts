import { Either, ParseResult, Schema } from "effect"
import { isJsonObject, type Json, parseJson, rawArgumentsOf } from "./toolArgs.js"

/**
 * What is wrong with a tool call's arguments, for the model: one line naming each bad field with what it expected
 * and what it got, and for arguments that are not an object at all a second line with the expected shape. Built
 * from the JSON Schema the model was shown, so it speaks the model's terms (not the Effect Schema's tree).
 */

const clip = (text: string, max = 120): string => (text.length <= max ? text : `${text.slice(0, max)}…`)

const shown = (value: unknown): string => clip(JSON.stringify(value) ?? String(value))

const kindOf = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "string" ? "a string" : `a ${typeof value}`

const bounds = (schema: Json): string => {
  const min = schema["minimum"] ?? schema["exclusiveMinimum"]
  const max = schema["maximum"] ?? schema["exclusiveMaximum"]
  const low = schema["minimum"] !== undefined ? ">=" : ">"
  const high = schema["maximum"] !== undefined ? "<=" : "<"
  if (typeof min === "number" && typeof max === "number") return ` ${low} ${min} and ${high} ${max}`
  if (typeof min === "number") return ` ${low} ${min}`
  return typeof max === "number" ? ` ${high} ${max}` : ""
}

const textLimits = (schema: Json): string => {
  const parts: Array<string> = []
  if (typeof schema["minLength"] === "number") parts.push(`at least ${schema["minLength"]} characters`)
  if (typeof schema["maxLength"] === "number") parts.push(`at most ${schema["maxLength"]} characters`)
  if (typeof schema["pattern"] === "string") parts.push(`matching ${schema["pattern"]}`)
  return parts.length === 0 ? "" : ` (${parts.join(", ")})`
}

/** A JSON Schema in a few words: `string`, `integer >= 1`, `"a" | "b"`, `{path: string, limit?: integer}`. */
export const describeSchema = (schema: unknown, depth = 0): string => {
  if (!isJsonObject(schema)) return "any value"
  const choices = schema["enum"]
  if (Array.isArray(choices)) return choices.map((choice) => JSON.stringify(choice)).join(" | ")
  if ("const" in schema) return JSON.stringify(schema["const"])
  const anyOf = schema["anyOf"] ?? schema["oneOf"]
  if (Array.isArray(anyOf)) return anyOf.map((branch) => describeSchema(branch, depth)).join(" | ")
  const type = schema["type"]
  if (Array.isArray(type)) return type.map((one) => describeSchema({ ...schema, type: one }, depth)).join(" | ")
  switch (type) {
    case "string":
      return `string${textLimits(schema)}`
    case "integer":
    case "number":
      return `${type}${bounds(schema)}`
    case "boolean":
    case "null":
      return type
    case "array": {
      const items = schema["items"]
      return items === undefined ? "array" : `array of ${describeSchema(Array.isArray(items) ? items[0] : items, depth + 1)}`
    }
    case "object": {
      const properties = schema["properties"]
      if (!isJsonObject(properties) || Object.keys(properties).length === 0 || depth >= 2) return "object"
      const required = new Set(Array.isArray(schema["required"]) ? schema["required"] : [])
      const fields = Object.entries(properties).map(([name, inner]) =>
        `${name}${required.has(name) ? "" : "?"}: ${describeSchema(inner, depth + 1)}`
      )
      return `{${fields.join(", ")}}`
    }
    default:
      return "any value"
  }
}

/** The part of a JSON Schema that describes the value at `path`, when the schema says. */
const schemaAt = (schema: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  let current = schema
  for (const key of path) {
    if (!isJsonObject(current)) return undefined
    const branches = current["anyOf"] ?? current["oneOf"]
    if (Array.isArray(branches)) {
      current = branches.map((branch) => schemaAt(branch, [key])).find((found) => found !== undefined)
      continue
    }
    const items = current["items"]
    const properties = current["properties"]
    current = typeof key === "number"
      ? (Array.isArray(items) ? items[key] : items)
      : isJsonObject(properties)
      ? properties[String(key)]
      : undefined
  }
  return current
}

const valueAt = (value: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>((current, key) =>
    Array.isArray(current) && typeof key === "number"
      ? current[key]
      : isJsonObject(current)
      ? current[String(key)]
      : undefined, value)

const fieldProblem = (
  schema: Json,
  args: unknown,
  path: ReadonlyArray<PropertyKey>,
  issues: ReadonlyArray<ParseResult.ArrayFormatterIssue>
): string => {
  const name = path.map(String).join(".")
  const expected = schemaAt(schema, path)
  const value = valueAt(args, path)
  if (issues.some((issue) => issue._tag === "Unexpected")) {
    const properties = schemaAt(schema, path.slice(0, -1))
    const known = isJsonObject(properties) && isJsonObject(properties["properties"])
      ? Object.keys(properties["properties"])
      : []
    return `${name}: not an argument of this tool${known.length === 0 ? "" : ` (it takes ${known.join(", ")})`}`
  }
  if (expected === undefined) return `${name}: ${issues[0]?.message ?? "invalid"}`
  if (value === undefined) return `${name}: missing, expected ${describeSchema(expected)}`
  return `${name}: expected ${describeSchema(expected)}, got ${shown(value)}`
}

const maxFields = 3

/** The message of a VALIDATION_ERROR for `args` that did not decode (`error`), against the schema the model saw. */
export const describeInvalidArgs = (
  toolId: string,
  schema: Json,
  args: unknown,
  error: ParseResult.ParseError | undefined
): string => {
  const head = `invalid arguments for ${toolId}`
  const shape = `expected a JSON object ${describeSchema(schema)}`
  const raw = rawArgumentsOf(args)
  if (raw !== undefined) {
    const parsed = parseJson(raw)
    const why = Either.isRight(parsed)
      ? `${kindOf(parsed.right)}, not an object`
      : parsed.left.reason === "depth"
      ? parsed.left.message
      : `not valid JSON (${parsed.left.message})`
    return `${head}: the arguments are ${why}: ${clip(raw)}\n${shape}`
  }
  if (!isJsonObject(args)) return `${head}: the arguments are ${kindOf(args)}, not an object: ${shown(args)}\n${shape}`
  const byPath = new Map<string, { path: ReadonlyArray<PropertyKey>; issues: Array<ParseResult.ArrayFormatterIssue> }>()
  const issues = error === undefined ? [] : ParseResult.ArrayFormatter.formatErrorSync(error)
  for (const issue of issues) {
    const key = issue.path.map(String).join("\u0000")
    const entry = byPath.get(key) ?? { path: issue.path, issues: [] }
    entry.issues.push(issue)
    byPath.set(key, entry)
  }
  // A field whose inner fields are named says nothing more (an optional struct's "expected undefined" branch).
  const keys = [...byPath.keys()]
  const explained = (key: string) => keys.some((other) => other !== key && other.startsWith(`${key}\u0000`))
  const problems = [...byPath.entries()].filter(([key]) => !explained(key)).map(([, { issues, path }]) =>
    path.length === 0 ? (issues[0]?.message ?? "invalid") : fieldProblem(schema, args, path, issues)
  )
  const more = problems.length > maxFields ? `; and ${problems.length - maxFields} more` : ""
  return `${head}: ${problems.slice(0, maxFields).join("; ")}${more}`
}

/** Options of the executor's decode: every issue, and no field the schema does not name. */
const strict = { errors: "all", onExcessProperty: "error" } as const

/**
 * A call's arguments decoded for its handler, or the VALIDATION_ERROR message. Arguments the model sent that were
 * not a JSON object never reach a handler, whatever its schema accepts.
 */
export const decodeToolArgs = (
  toolId: string,
  parameters: Schema.Schema<unknown, unknown>,
  schema: Json,
  args: unknown
): Either.Either<unknown, string> => {
  if (rawArgumentsOf(args) !== undefined) {
    return Either.left(describeInvalidArgs(toolId, schema, args, undefined))
  }
  return Either.mapLeft(
    Schema.decodeUnknownEither(parameters)(args, strict),
    (error) => describeInvalidArgs(toolId, schema, args, error)
  )
}
