import { Tool, Toolkit } from "@effect/ai"
import { Schema } from "effect"
import { argsJsonSchema, isJsonObject, rawArgumentsKey } from "./toolArgs.js"
import type { RegisteredTool } from "./ToolRegistry.js"

/** Provider function names allow letters, digits, `_` and `-`: a dotted tool id travels with `__` for its dots. */
export const modelToolName = (toolId: string): string => toolId.replace(/\./g, "__")

/**
 * The parameters @effect/ai is given for a tool: the model is shown the argument JSON Schema of the contract, but
 * every field decodes anything, and arguments that were not a JSON object arrive under `rawArgumentsKey`. The
 * model's arguments are checked by the executor (a VALIDATION_ERROR result the model can read), not by the stream
 * decoder (which would end the turn).
 */
const permissiveParameters = (tool: RegisteredTool) => {
  const shown = tool.spec.argsJsonSchema ?? argsJsonSchema(tool.parameters)
  const properties = isJsonObject(shown["properties"]) ? shown["properties"] : {}
  const required = new Set(Array.isArray(shown["required"]) ? shown["required"] : [])
  const fields: Record<string, Schema.Struct.Field> = {}
  for (const name of Object.keys(properties)) {
    fields[name] = required.has(name) ? Schema.Unknown : Schema.optional(Schema.Unknown)
  }
  fields[rawArgumentsKey] = Schema.optional(Schema.Unknown)
  return Schema.Struct(fields).annotations({ jsonSchema: shown })
}

/** A registered tool as @effect/ai offers it to a model (results are whatever the executor returns). */
export const toAiTool = (tool: RegisteredTool) =>
  Tool.make(modelToolName(tool.spec.toolId), {
    description: tool.spec.description,
    success: Schema.Unknown,
    failure: Schema.Unknown,
    failureMode: "return"
  }).setParameters(permissiveParameters(tool))

/** A toolkit of registered tools, and the way back from a model's function name to the tool id. */
export const toolkitFor = (tools: ReadonlyArray<RegisteredTool>) => {
  const byName = new Map(tools.map((tool) => [modelToolName(tool.spec.toolId), tool.spec.toolId]))
  return {
    toolkit: Toolkit.make(...tools.map(toAiTool)),
    toolIdOf: (name: string): string | undefined => byName.get(name)
  }
}
