import { Effect } from "effect"
import type { Audience } from "../../kernel/Audience.js"
import { operatorUserId } from "../../kernel/Audience.js"
import { conversationOfChat } from "../../session/conversationIds.js"
import { PairingStore, userKey } from "../../users/PairingStore.js"
import type { WorkOrigin } from "../Followups.js"

/** Why a schedule may not deliver where it asked, or cannot: the error's kind says which. */
export interface DeliveryRefusal {
  readonly reason: "not-allowed" | "unknown" | "storage"
  readonly message: string
}

/**
 * Where each firing of a schedule comes from. Without `deliverTo`, the conversation that created it (`origin`). With
 * one, the paired user's chat, so the turn's reply reaches them there: a conversation other than the operator's may
 * name only its own chat (`own`, as the message tool); the operator may name any approved user, and the firing then
 * runs as the operator's (userId `operator`: the operator's conversation and scope, answered on that user's chat).
 */
export const deliveryOrigin = (
  deliverTo: string | undefined,
  origin: WorkOrigin,
  own: Audience | undefined
): Effect.Effect<{ readonly origin: WorkOrigin; readonly deliverTo: string | null }, DeliveryRefusal, PairingStore> =>
  Effect.gen(function*() {
    if (deliverTo === undefined || deliverTo.trim() === "") return { origin, deliverTo: null }
    const pairings = yield* PairingStore
    const notOwn: DeliveryRefusal = {
      reason: "not-allowed",
      message: `in this conversation a schedule may deliver only to this chat (${own?.interface} ${own?.channel}), not ` +
        `${deliverTo}; only the operator schedules for someone else`
    }
    const found = yield* pairings.find(deliverTo.trim()).pipe(
      Effect.mapError((error): DeliveryRefusal =>
        error.reason === "storage" ? { reason: "storage", message: error.message } : own !== undefined ? notOwn : { reason: "unknown", message: error.message })
    )
    if (own !== undefined && conversationOfChat(found.interface, found.chatId) !== own.conversationId) return yield* Effect.fail(notOwn)
    if (found.status !== "approved") {
      return yield* Effect.fail<DeliveryRefusal>({ reason: "unknown", message: `${userKey(found)} has not been paired yet (their code waits for kern pair)` })
    }
    const userId = own === undefined ? operatorUserId : origin.userId
    return { origin: { interface: found.interface, channel: found.chatId, userId }, deliverTo: userKey(found) }
  })

/** Who added a schedule, as listings show it: `operator`, or the paired user (`telegram:42`). */
export const creatorOf = (origin: WorkOrigin): string =>
  origin.userId === operatorUserId ? operatorUserId : `${origin.interface}:${origin.userId}`
