import { Effect, PubSub, Queue, Ref, type Scope } from "effect"
import type { ApprovalResolution, ApprovalsShape, PendingApproval } from "../../runtime/Approvals.js"
import { requestMessage, resolvedMessage } from "./approvalMessages.js"
import { slackInterface } from "./Replies.js"
import type { SlackApi, SlackApiError } from "./SlackApi.js"
import { decodeTarget, postFields, type Target } from "./target.js"
import { Posted } from "./wire.js"

interface Shown {
  readonly pending: PendingApproval
  readonly target: Target
  readonly ts: string
}

const logFailure = (what: string) => (error: SlackApiError) => Effect.logWarning(`kern: Slack: could not ${what}: ${error.message}`)

/**
 * Shows Slack turns' approval requests where the turn came from (the DM, or the mention's thread) with Approve and
 * Deny buttons, and once answered (here, in the terminal, or by timeout) replaces the buttons with the outcome.
 * Subscribes when called, so the layer calling it is subscribed before the runtime serves a turn.
 */
export const start = (api: SlackApi, approvals: ApprovalsShape): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const requests = yield* PubSub.subscribe(approvals.requests)
    const resolved = yield* PubSub.subscribe(approvals.resolved)
    const shown = yield* Ref.make(new Map<string, Shown>())

    const show = (pending: PendingApproval) =>
      Effect.gen(function*() {
        if (pending.origin.interface !== slackInterface) return
        const target = decodeTarget(pending.origin.channel)
        const posted = yield* api.call("chat.postMessage", { ...postFields(target), ...requestMessage(pending) }, Posted)
        yield* Ref.update(shown, (all) => new Map(all).set(pending.id, { pending, target, ts: posted.ts }))
      }).pipe(Effect.catchAll(logFailure("show an approval request")))

    const settle = (resolution: ApprovalResolution) =>
      Effect.gen(function*() {
        const entry = yield* Ref.modify(shown, (all) => {
          const found = all.get(resolution.id)
          const next = new Map(all)
          next.delete(resolution.id)
          return [found, next] as const
        })
        if (entry === undefined) return
        yield* api.call(
          "chat.update",
          { channel: entry.target.channel, ts: entry.ts, ...resolvedMessage(entry.pending, resolution) },
          Posted
        )
      }).pipe(Effect.catchAll(logFailure("update an approval request")))

    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(requests), show)))
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(resolved), settle)))
  })
