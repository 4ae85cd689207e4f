import type { DateTime } from "effect"
import { localIso } from "../session/envelope.js"
import { heartbeatInterface } from "../turn/MessageQueue.js"
import type { AgentEventInput } from "./AgentEvent.js"
import { formatApprovalRequest, formatApprovalResolved } from "./approvalPrompt.js"
import { formatQuestion, formatQuestionResolved } from "./questionPrompt.js"
import { rawArgumentsOf } from "../kernel/toolArgs.js"
import { clip } from "../config/clip.js"

const keyArgs = ["path", "command", "pattern", "url", "query", "task", "artifactId", "action"] as const

const clipLine = (text: string) => clip(text, 80)

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

/** The conversation the operator's terminal speaks in, in this process or attached to a running agent. */
export const terminalConversation = { interface: "terminal", channel: "terminal" } as const

const fromTerminal = (event: { readonly interface: string; readonly channel: string }) =>
  event.interface === terminalConversation.interface && event.channel === terminalConversation.channel

/**
 * How the terminal shows an event of the agent, whatever channel its turn came from: other channels' messages as they
 * arrive, the terminal's own message when it joined a running turn, streamed text as is, a line per tool call and
 * failed result, every failure, approvals, and the message tool's sends (a turn's reply is on screen already).
 */
export const showEvent = (event: AgentEventInput, zone: DateTime.TimeZone): string => {
  switch (event.type) {
    case "incoming":
      if (fromTerminal(event)) return event.messageId === event.turnId ? "" : `\n  (+ ${event.text})\n`
      // A heartbeat's prompt is the agent's own; its `heartbeat` event says it began.
      if (event.interface === heartbeatInterface) return ""
      return `\n[${event.interface} ${event.channel}] ${event.text}\n`
    case "thinking":
      return ""
    case "text-delta":
      return event.delta
    case "tool-call":
      return `\n  → ${event.name} ${keyArgument(event.params)}\n`
    case "tool-result":
      return event.isError ? `  ✗ ${event.name}: ${event.text.split("\n")[0] ?? ""}\n` : ""
    case "recall":
      return `  (recalled ${event.hits} passage${event.hits === 1 ? "" : "s"} of earlier conversations, ${event.tokens} tokens)\n`
    case "context":
    case "retry":
      return `  (${event.text})\n`
    case "error":
      return `\nkern: ${event.message}\n`
    case "finish":
      return event.reply === "" || event.reply.endsWith("\n") ? "" : "\n"
    case "outgoing":
      return event.turnId === undefined ? formatOutgoing(event) : ""
    case "heartbeat":
      return event.outcome === "sent" ? "\n[heartbeat]\n" : ""
    case "approval":
      return formatApprovalRequest({ ...event, expires: localIso(Date.parse(event.expiresAt), zone).slice(11, 19) })
    case "approval-resolved":
      return formatApprovalResolved(event)
    case "question":
      return formatQuestion(event, localIso(Date.parse(event.expiresAt), zone).slice(11, 19))
    case "question-resolved":
      return formatQuestionResolved(event)
    case "limit":
      return `\n[limit] ${event.message}\n`
    case "reset":
      return "\n(some events were missed while disconnected)\n"
  }
}

/** A message the agent sent on its own (the message tool), not as a turn's reply. */
export const formatOutgoing = (sent: { readonly interface: string; readonly channel?: string | undefined; readonly text: string }): string =>
  `\n[→ ${sent.interface}${sent.channel === undefined ? "" : ` ${sent.channel}`}] ${sent.text}\n`

export const helpText = [
  "Type a message and press Enter. Commands:",
  "  /status   the agent, its model, session and usage",
  "  /usage    today's model spend against the daily caps (limits)",
  "  /new      start a new session",
  "  /stop     stop the running turn (what it said so far is kept)",
  "  /approve [id], /deny [id]   answer a tool call waiting for approval (y / n answer the oldest)",
  "  (while the agent asks you a question, the next line you type is your answer: a number, or your words)",
  "  /help     this list",
  "  /quit     leave (also Ctrl-D)"
].join("\n")
