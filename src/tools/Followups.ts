import { Context, Effect, Layer, Schema } from "effect"
import { operatorUserId } from "../kernel/Audience.js"
import type { RunContextData } from "../kernel/RunContext.js"

/**
 * Where a piece of work that outlives its turn was started (a background job, a sub-agent, a schedule): the
 * interface, chat and user of the turn that started it. Its result comes back as a message from there, so it lands
 * in the same conversation (conversationRouting.ts), runs with the same user's scope and is answered on the same chat.
 */
export const WorkOrigin = Schema.Struct({
  interface: Schema.String,
  channel: Schema.String,
  userId: Schema.String
})
export type WorkOrigin = typeof WorkOrigin.Type

/** Work started outside any conversation (`kern kernel exec`, a library call): the operator's, on the command line. */
export const operatorOrigin: WorkOrigin = { interface: "cli", channel: "terminal", userId: operatorUserId }

/** The origin of the run `ctx` belongs to: its audience's chat and user, or the operator's. */
export const originOf = (ctx: Pick<RunContextData, "audience">): WorkOrigin =>
  ctx.audience === undefined
    ? operatorOrigin
    : { interface: ctx.audience.interface, channel: ctx.audience.channel, userId: ctx.audience.userId }

export class FollowupError extends Schema.TaggedError<FollowupError>()("FollowupError", {
  message: Schema.String
}) {}

export interface FollowupsService {
  /**
   * Starts a new turn in the conversation of `origin` with `text` as its message, exactly once per `key`: the
   * message is stored durably (kern.db's inbox, answered after a crash or restart) together with the key, and a
   * later call with a key already posted does nothing and returns false. Keys are free-form and name the event
   * (`job:3:finished`, `schedule:7:2026-11-27T09:00`); keep them short.
   */
  readonly post: (key: string, origin: WorkOrigin, text: string) => Effect.Effect<boolean, FollowupError>
  /** Whether `key` was posted already. */
  readonly posted: (key: string) => Effect.Effect<boolean, FollowupError>
}

/**
 * Turns that come back later: what background work uses to report into the conversation that started it. Only the
 * running agent can take such a turn (src/runtime/followupsLive.ts); elsewhere `unavailable` refuses.
 */
export class Followups extends Context.Tag("kern/tools/Followups")<Followups, FollowupsService>() {}

/** Followups for a process that runs no agent (`kern kernel exec`): posting is refused with the reason. */
export const unavailable: Layer.Layer<Followups> = Layer.succeed(Followups, {
  post: () => Effect.fail(new FollowupError({ message: "only a running agent (kern run, kern start) can take a later turn" })),
  posted: () => Effect.succeed(false)
})
