import type { TurnEvent } from "../turn/TurnEvent.js"
import { rawArgumentsOf } from "../kernel/toolArgs.js"

const keyArgs = ["path", "command", "pattern", "url", "query", "task", "artifactId", "action"] as const

const clipLine = (text: string) => (text.length > 80 ? `${text.slice(0, 77)}...` : text)

/**
 * The one argument that says what a tool call does (`read notes/today.md`, `bash ls -la`); arguments that were not
 * a JSON object are shown as the model sent them.
 */
export const keyArgument = (params: unknown): string => {
  const raw = rawArgumentsOf(params)
  if (raw !== undefined) return clipLine(raw.replace(/\s+/g, " "))
  if (typeof params !== "object" || params === null) return params === undefined ? "" : clipLine(String(JSON.stringify(params)))
  const record = params as Record<string, unknown>
  for (const key of keyArgs) {
    const value = record[key]
    if (typeof value === "string") return clipLine(value)
  }
  const json = JSON.stringify(params)
  return json === "{}" ? "" : clipLine(json)
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
    case "step":
      return ""
    case "context":
      return `  (${event.text})\n`
    case "recall":
      return `  (recalled ${event.hits.length} earlier conversation${event.hits.length === 1 ? "" : "s"}, ${event.tokens} tokens)\n`
  }
}

/** A message the agent sent on its own (the message tool), not as a turn's reply. */
export const formatOutgoing = (sent: { readonly interface: string; readonly channel?: string | undefined; readonly text: string }): string =>
  `\n[→ ${sent.interface}${sent.channel === undefined ? "" : ` ${sent.channel}`}] ${sent.text}\n`

export const helpText = [
  "Type a message and press Enter. Commands:",
  "  /status   the agent, its model, session and usage",
  "  /new      start a new session",
  "  /approve [id], /deny [id]   answer a tool call waiting for approval (y / n answer the oldest)",
  "  /help     this list",
  "  /quit     leave (also Ctrl-D)"
].join("\n")
