import type { ToolResult } from "./contracts.js"

/** What a person or a model reads of a tool's result: its `text` when it has one, else the data as JSON. */
export const dataText = (data: unknown): string => {
  if (typeof data === "string") return data
  if (typeof data === "object" && data !== null && "text" in data && typeof data.text === "string") return data.text
  return JSON.stringify(data ?? null, null, 2)
}

/** A result as text: the data's text, or `CODE: message` for a failure. */
export const toolResultText = (result: ToolResult): string =>
  result.success ? dataText(result.data) : `${result.errorCode}: ${result.errorMessage}`
