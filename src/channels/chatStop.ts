import { Effect } from "effect"
import { conversationIdOf } from "../turn/TurnEvent.js"
import type { TurnStops } from "../turn/TurnStops.js"
import { type PairingStore, userKey } from "../users/PairingStore.js"
import { isChatOperator } from "./chatOperator.js"

/** `/stop` as a chat user types it: alone, or addressed to a bot in a group (`/stop@kern_bot`). */
export const isStopCommand = (text: string): boolean => /^\/stop(@[A-Za-z0-9_]+)?$/i.test(text.trim())

/**
 * `/stop` from a paired chat user (Telegram, Slack): stops the running turn of their conversation when it is theirs,
 * or whoever's it is when they are a paired operator. It never reaches the model, and never leaves the chat
 * unanswered: the text returned is what to tell them (the turn itself reports `Stopped` where its reply would be).
 */
export const chatStop = (stops: TurnStops, pairings: PairingStore, iface: string, channel: string, userId: string) =>
  Effect.gen(function*() {
    const conversationId = conversationIdOf({ interface: iface, channel })
    const user = userKey({ interface: iface, userId })
    const here = (yield* stops.running).filter((turn) => turn.conversationId === conversationId)
    if (here.length === 0) return "Nothing is running here to stop."
    // A users table that cannot be read makes no one an operator: they may still stop their own turn.
    const operator = yield* isChatOperator(pairings, iface, userId, "/stop")
    const stopped = yield* stops.stopWhere(
      (turn) => turn.conversationId === conversationId && (operator || turn.userId === userId),
      user
    )
    return stopped.length > 0
      ? "Stopping."
      : "The running turn is someone else's: only they or an operator can stop it."
  }).pipe(Effect.withSpan("kern.channels.chatStop"))
