import type { QueuedMessage } from "../../src/turn/MessageQueue.js"

/** A chat message as the queue hands it to a turn ("hi"), its id the turn id's number: for the chat reply tests. */
export const queued = (iface: string, channel: string, userId: string, turnId: string): QueuedMessage => ({
  id: Number(turnId),
  interface: iface,
  conversation: "main",
  channel,
  userId,
  text: "hi",
  receivedAtMs: 0,
  turnId
})
