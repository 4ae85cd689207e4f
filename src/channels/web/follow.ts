import { Effect, Option, Stream } from "effect"
import type { AgentEvent, MessageRequest } from "./api.js"
import { type AgentClient, ClientError } from "./client.js"

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
 * One message through a running agent, and its turn's reply: subscribed to the events first (so none is missed),
 * then the message posted, then its turn followed to its `finish`. Fails with the turn's error, or when the stream
 * ends before the turn does (the turn goes on in the agent).
 */
export const replyThrough = (client: AgentClient, message: MessageRequest) =>
  Effect.scoped(Effect.gen(function*() {
    const events = yield* client.events()
    const { turnId } = yield* client.send(message)
    const mine = makeTurnFollower(turnId)
    const last = yield* events.pipe(
      Stream.filter(mine),
      Stream.filter((event) => event.type === "finish" || event.type === "error"),
      Stream.take(1),
      Stream.runLast
    )
    if (Option.isNone(last)) {
      return yield* new ClientError({
        reason: "unreachable",
        message: `the connection to the agent ended before turn ${turnId} finished; it goes on in the agent`
      })
    }
    const event = last.value
    if (event.type === "error") return yield* new ClientError({ reason: "refused", message: event.message })
    return event.type === "finish" ? { turnId, reply: event.reply, delivered: event.delivered } : { turnId, reply: "", delivered: false }
  }))
