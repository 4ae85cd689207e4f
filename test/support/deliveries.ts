import type { Delivery } from "../../src/runtime/Conversations.js"

/** A message from the web UI's operator as the inbox hands it to a conversation: inbox id `id`. */
export const delivery = (id: number, text: string): Delivery => ({
  id,
  interface: "http",
  channel: "web",
  userId: "operator",
  text,
  receivedAtMs: 1_764_000_000_000 + id
})
