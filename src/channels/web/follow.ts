import type { TurnEvent } from "../../turn/TurnEvent.js"
import type { AgentEvent } from "./api.js"

/**
 * Follows one message's turn in the event stream: the events whose turnId is the message's, or, when the message
 * was injected into a running turn of its channel, that turn's from its `incoming` on.
 */
export const makeTurnFollower = (messageId: string) => {
  let turnId = messageId
  return (event: AgentEvent): boolean => {
    if (event.type === "incoming" && event.messageId === messageId) turnId = event.turnId
    return "turnId" in event && event.turnId === turnId
  }
}

/**
 * An API event as the turn events `kern chat --json` has always printed (and the terminal formats): the text, tool
 * calls and results, usage, the failure, and `done`. Events with no such line (incoming, thinking) give none.
 */
export const asTurnEvents = (event: AgentEvent): ReadonlyArray<TurnEvent> => {
  switch (event.type) {
    case "text-delta":
      return [{ type: "text", delta: event.delta }]
    case "tool-call":
      return [{ type: "tool-call", id: event.id, name: event.name, params: event.params }]
    case "tool-result":
      return [{ type: "tool-result", id: event.id, name: event.name, isError: event.isError, text: event.text, durationMs: event.durationMs }]
    case "finish":
      return [
        { type: "usage", ...event.usage },
        { type: "done", reply: event.reply, delivered: event.delivered, steps: event.steps }
      ]
    default:
      return []
  }
}
