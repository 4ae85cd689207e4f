import { Schema } from "effect"

/** A tool id, or a pattern over tool ids where `*` stands for any run of characters (`mcp.github.*`). */
export const ToolPattern = Schema.String.pipe(
  Schema.pattern(/^[a-z*][a-z0-9_\-.*]*$/),
  Schema.annotations({ identifier: "a tool id or pattern such as \"webfetch\" or \"mcp.github.*\"" })
)

/**
 * `tools`: seed 002's ToolPolicy allow and block lists. A blocked tool is neither offered to the model nor run; when
 * `allow` is given, only the tools it names are. Block wins over allow.
 */
export const ToolLists = Schema.Struct({
  allow: Schema.optional(Schema.Array(ToolPattern).pipe(Schema.minItems(1))),
  block: Schema.optionalWith(Schema.Array(ToolPattern), { default: () => [] })
})
export type ToolLists = typeof ToolLists.Type

export const toolListsExpectation =
  "an object { allow?, block? } of arrays of tool ids, where * matches any characters (e.g. { \"block\": [\"webfetch\", \"mcp.github.*\"] })"
