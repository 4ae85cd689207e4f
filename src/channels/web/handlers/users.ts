import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { PairingStore } from "../../../users/PairingStore.js"
import { serverError } from "../ApiError.js"
import { KernApi } from "../KernApi.js"

/** The approved channel users by name; a pending user (and their code) is never in it. */
export const layer = HttpApiBuilder.group(KernApi, "users", (handlers) =>
  Effect.gen(function*() {
    const pairings = yield* PairingStore
    return handlers.handle("list", () =>
      pairings.list.pipe(
        Effect.map((all) => ({
          users: all.filter((p) => p.status === "approved").map((p) => ({
            interface: p.interface,
            userId: p.userId,
            chatId: p.chatId,
            name: p.displayName,
            role: p.role
          }))
        })),
        Effect.mapError(serverError),
        Effect.withSpan("kern.web.users.list")
      ))
  }))
