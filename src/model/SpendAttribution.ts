import { Context } from "effect"

/** What a model call was for: the ledger sums each apart (`kern status` shows them). */
export type SpendPurpose = "turn" | "heartbeat" | "summary" | "embedding" | "other"

/**
 * Whom a model call is charged to: the conversation, person and channel of the turn it serves. A turn provides it
 * around its work (so the summaries its background pass writes are its conversation's); embeddings are the agent's
 * own. A call made where nobody provided it (a library's own call, a read-only command) is charged to the agent
 * alone: the agent's `perDay` cap holds for it all the same.
 */
export interface SpendAttributionData {
  readonly purpose: SpendPurpose
  readonly conversationId?: string | undefined
  /** `operator`, or a chat user as `interface:userId` (PairingStore's key). */
  readonly user?: string | undefined
  /** `interface:channel`. */
  readonly channel?: string | undefined
}

export class SpendAttribution extends Context.Reference<SpendAttribution>()("kern/model/SpendAttribution", {
  defaultValue: (): SpendAttributionData => ({ purpose: "other" })
}) {}

/** The person a message's sender is, as the ledger keys them: the operator is one person whatever interface they use. */
export const spendUserKey = (iface: string, userId: string): string =>
  userId === "operator" ? "operator" : `${iface}:${userId}`

/** A turn's attribution, from where its message came from. */
export const turnAttribution = (
  purpose: SpendPurpose,
  audience: { readonly conversationId: string; readonly interface: string; readonly channel: string; readonly userId: string }
): SpendAttributionData => ({
  purpose,
  conversationId: audience.conversationId,
  user: spendUserKey(audience.interface, audience.userId),
  channel: `${audience.interface}:${audience.channel}`
})
