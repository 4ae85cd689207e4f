import type { TurnEvent } from "../agent/TurnEvent.js"

const keyArgs = ["path", "command", "pattern", "url", "query", "task", "artifactId", "action"] as const

/** The one argument that says what a tool call does (`read notes/today.md`, `bash ls -la`). */
export const keyArgument = (params: unknown): string => {
  if (typeof params !== "object" || params === null) return ""
  const record = params as Record<string, unknown>
  for (const key of keyArgs) {
    const value = record[key]
    if (typeof value === "string") return value.length > 80 ? `${value.slice(0, 77)}...` : value
  }
  const json = JSON.stringify(params)
  return json === "{}" ? "" : json.length > 80 ? `${json.slice(0, 77)}...` : json
}

/** How the terminal shows a turn event: streamed text as is, a line per tool call and failed result. */
export const formatEvent = (event: TurnEvent): string => {
  switch (event.type) {
    case "text":
      return event.delta
    case "tool-call":
      return `\n  → ${event.name} ${keyArgument(event.params)}\n`
    case "tool-result":
      return event.isError ? `  ✗ ${event.name}: ${event.text.split("\n")[0] ?? ""}\n` : ""
    case "injected":
      return `\n  (+ ${event.text})\n`
    case "error":
      return `\nkern: ${event.message}\n`
    case "done":
      return event.reply === "" || event.reply.endsWith("\n") ? "" : "\n"
    case "usage":
      return ""
  }
}

export const helpText = [
  "Type a message and press Enter. Commands:",
  "  /status   the agent, its model, session and usage",
  "  /new      start a new session",
  "  /help     this list",
  "  /quit     leave (also Ctrl-D)"
].join("\n")
