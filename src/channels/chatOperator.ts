import { Effect, Option } from "effect"
import { type PairingStore, userKey } from "../users/PairingStore.js"

/**
 * Whether a chat user is a paired operator (approved, role operator): what `/stop` and `/usage` grant more to. A users
 * table that cannot be read makes no one an operator, said in the log under `command`.
 */
export const isChatOperator = (pairings: PairingStore, iface: string, userId: string, command: string) =>
  pairings.find(userKey({ interface: iface, userId })).pipe(
    Effect.map(Option.some),
    Effect.catchTag("PairingError", (error) => Effect.as(Effect.logWarning(`kern: ${iface}: ${command}: ${error.message}`), Option.none())),
    Effect.map((pairing) => Option.isSome(pairing) && pairing.value.status === "approved" && pairing.value.role === "operator")
  )
