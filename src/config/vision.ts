import { Schema } from "effect"

const ModelName = Schema.NonEmptyTrimmedString.annotations({ identifier: "a model name" })

/**
 * `vision`: which models are sent images (and PDFs where the provider takes them) as parts. `true`: the configured
 * models see; `false`: none does; a list: the models named see (a name matches with or without its router prefix,
 * `openai/gpt-4o` or `gpt-4o`). Unset: src/model/visionModels.ts's table of known models decides, and a model it does
 * not know is treated as not seeing (it gets a note naming the file instead).
 */
export const Vision = Schema.Union(Schema.Boolean, Schema.Array(ModelName))
export type Vision = typeof Vision.Type

export const visionExpectation = "true, false, or an array of model names that take images (e.g. [\"llava:13b\"]); " +
  "unset, a table of known models decides"
