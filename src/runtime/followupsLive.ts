import { Effect, Layer } from "effect"
import { FollowupError, Followups, type WorkOrigin } from "../tools/Followups.js"
import { AgentRuntime } from "./AgentRuntime.js"
import { Inbox } from "./Inbox.js"

/** The cursor row (channel_cursors) that records a followup as posted, written with its inbox row in one transaction. */
const cursorKey = (key: string) => `followup:${key}`

/**
 * Followups through the running agent: the message goes into the inbox with its key's cursor row in the same
 * transaction (Inbox.add), so after a crash it is either posted (and answered after the restart) or not posted at
 * all; one at a time in this process, so two posts of one key cannot both pass the check.
 */
export const layer = Layer.effect(
  Followups,
  Effect.gen(function*() {
    const runtime = yield* AgentRuntime
    const inbox = yield* Inbox
    const one = yield* Effect.makeSemaphore(1)
    const failed = (error: { readonly message: string }) => new FollowupError({ message: error.message })

    const posted = (key: string) =>
      inbox.cursor(cursorKey(key)).pipe(Effect.map((found) => found._tag === "Some"), Effect.mapError(failed))

    const post = (key: string, origin: WorkOrigin, text: string) =>
      one.withPermits(1)(Effect.gen(function*() {
        if (yield* posted(key)) return false
        yield* runtime.submit(
          { interface: origin.interface, channel: origin.channel, userId: origin.userId, text },
          { key: cursorKey(key), value: "posted" }
        ).pipe(Effect.mapError(failed))
        return true
      })).pipe(Effect.withSpan("kern.followups.post", { attributes: { key } }))

    return Followups.of({ post, posted })
  })
)
