import type { PlatformError } from "@effect/platform/Error"
import { Effect } from "effect"

/** Whether a file-system error says the path does not exist (the one error a reader may treat as "empty"). */
export const isNotFound = (error: PlatformError): boolean => error._tag === "SystemError" && error.reason === "NotFound"

/** `fallback` when the path does not exist; every other error (permissions, I/O, a folder in its place) surfaces. */
export const orIfMissing = <B>(fallback: () => B) =>
<A, E extends PlatformError, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A | B, E, R> =>
  Effect.catchIf(effect, isNotFound, () => Effect.succeed(fallback()))
