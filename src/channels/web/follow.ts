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
