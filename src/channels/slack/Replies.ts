import { Clock, Duration, Effect, FiberMap, Option, Queue, Ref, type Scope } from "effect"
import { failureTextFor } from "../failureText.js"
import { interruptedText } from "../leftoverReplies.js"
import { type Placeholder, ReplyPlaceholders } from "../ReplyPlaceholders.js"
import { escapeSlack, toMrkdwn } from "./mrkdwn.js"
import type { SlackApi, SlackApiError } from "./SlackApi.js"
import { chunkLimit, splitMessage } from "./split.js"
import { decodeTarget, postFields, type Target } from "./target.js"
import { Posted } from "./wire.js"
import type { TurnEvent } from "../../turn/TurnEvent.js"
import { makeTurnOrigins } from "../../turn/turnOrigins.js"

export const slackInterface = "slack"

/** Slack asks apps to update a message at most about once a second. */
export const updateSpacing = Duration.seconds(1)
export const placeholder = "_thinking…_"

/** What a turn's message shows while it runs, and how the turn ended. */
interface View {
  readonly text: string
  readonly tool: string | undefined
  readonly error: string | undefined
  readonly final: { readonly reply: string; readonly delivered: boolean } | undefined
}

/** The message while the turn runs: the reply so far (one chunk's worth), or the tool at work. */
export const renderLive = (view: View): string => {
  const text = view.text.trim() === "" ? "" : toMrkdwn(view.text.trim())
  // While it streams, a long reply shows its first chunk (cut where the final message will be).
  const [first = "", ...more] = splitMessage(text, chunkLimit - 100)
  const body = more.length === 0 ? first : `${first}\n…`
  const tool = view.tool === undefined ? "" : `_running ${escapeSlack(view.tool)}…_`
  return [body, tool].filter((part) => part !== "").join("\n\n") || placeholder
}

/** The messages a finished turn leaves: its reply in chunks, its failure, or nothing (NO_REPLY, no text). */
export const renderFinal = (view: View): ReadonlyArray<string> =>
  view.final?.delivered === true
    ? splitMessage(toMrkdwn(view.final.reply))
    : view.error === undefined
    ? []
    : [`:warning: ${escapeSlack(view.error)}`]

const logFailure = (what: string) => (error: SlackApiError) => Effect.logWarning(`kern: Slack: could not ${what}: ${error.message}`)

/**
 * One turn's message: a placeholder as the turn starts, then `chat.update` with the reply so far, spaced at least
 * `updateSpacing` apart on the Clock (the last state wins: updates are coalesced, never queued), then the final reply
 * (its first chunk replacing the placeholder, the others posted after it) or the placeholder deleted.
 */
const streamTurn = (
  api: SlackApi,
  placeholders: ReplyPlaceholders["Type"],
  turnId: string,
  channel: string,
  view: Ref.Ref<View>,
  wake: Queue.Dequeue<void>
) =>
  Effect.gen(function*() {
    const target = decodeTarget(channel)
    let ts: string | undefined
    let lastMs = 0
    let shown = ""
    const spaced = Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const wait = lastMs + Duration.toMillis(updateSpacing) - now
      return wait > 0 ? Effect.sleep(Duration.millis(wait)) : Effect.void
    })
    const stamp = Effect.map(Clock.currentTimeMillis, (now) => {
      lastMs = now
    })
    const post = (text: string) => api.call("chat.postMessage", { ...postFields(target), text }, Posted)
    const update = (text: string) =>
      ts === undefined ? Effect.void : Effect.zipRight(
        api.call("chat.update", { channel: target.channel, ts, text }, Posted).pipe(Effect.catchAll(logFailure("update a reply"))),
        stamp
      )

    while ((yield* Ref.get(view)).final === undefined) {
      yield* Queue.take(wake)
      if ((yield* Ref.get(view)).final !== undefined) break
      if (ts === undefined) {
        shown = renderLive(yield* Ref.get(view))
        const posted = yield* post(shown).pipe(
          Effect.map((answer) => answer.ts),
          Effect.catchAll((error) => Effect.as(logFailure("post a placeholder")(error), undefined))
        )
        ts = posted
        // Kept in kern.db until the reply replaces it: a process killed before then leaves it for the next start.
        if (posted !== undefined) {
          yield* placeholders.posted({ interface: slackInterface, turnId, channel, messageId: posted }).pipe(
            Effect.catchAll((error) => Effect.logWarning(`kern: Slack: could not remember the placeholder: ${error.message}`))
          )
        }
        yield* stamp
        continue
      }
      yield* spaced
      const current = yield* Ref.get(view)
      if (current.final !== undefined) break
      const text = renderLive(current)
      if (text !== shown) {
        shown = text
        yield* update(text)
      }
    }

    yield* finishTurn(api, target, ts, renderFinal(yield* Ref.get(view)), spaced)
    yield* placeholders.settled(slackInterface, turnId).pipe(
      Effect.catchAll((error) => Effect.logWarning(`kern: Slack: could not settle the placeholder: ${error.message}`))
    )
  }).pipe(Effect.withSpan("kern.slack.reply"))

/**
 * A turn's last messages: the first chunk replaces the placeholder `ts` (posted afresh if it is gone), the others
 * follow; no chunk takes the placeholder back.
 */
const finishTurn = (
  api: SlackApi,
  target: Target,
  ts: string | undefined,
  chunks: ReadonlyArray<string>,
  spaced: Effect.Effect<void> = Effect.void
) =>
  Effect.gen(function*() {
    const post = (text: string) => api.call("chat.postMessage", { ...postFields(target), text }, Posted)
    const [first, ...rest] = chunks
    if (first === undefined) {
      if (ts !== undefined) {
        yield* api.call("chat.delete", { channel: target.channel, ts }, Posted).pipe(Effect.catchAll(logFailure("remove the placeholder")))
      }
      return
    }
    if (ts === undefined) {
      yield* post(first).pipe(Effect.catchAll(logFailure("send a reply")))
    } else {
      yield* spaced
      // The placeholder may be gone (deleted in Slack): the reply is then posted afresh rather than lost.
      yield* api.call("chat.update", { channel: target.channel, ts, text: first }, Posted).pipe(
        Effect.catchAll((error) => Effect.zipRight(logFailure("update a reply")(error), post(first))),
        Effect.catchAll(logFailure("send a reply"))
      )
    }
    for (const chunk of rest) yield* post(chunk).pipe(Effect.catchAll(logFailure("send a reply")))
  })

/** A leftover placeholder finished at start (leftoverReplies.ts): the saved reply in its place, or the interruption said. */
export const finishPlaceholder = (api: SlackApi) => (placeholder: Placeholder, reply: Option.Option<string>) =>
  finishTurn(
    api,
    decodeTarget(placeholder.channel),
    placeholder.messageId,
    Option.match(reply, {
      onNone: () => [`:warning: ${escapeSlack(interruptedText)}`],
      onSome: (text) => splitMessage(toMrkdwn(text))
    })
  )

interface Live {
  readonly view: Ref.Ref<View>
  readonly wake: Queue.Queue<void>
}

/**
 * Follows the runtime's Slack turns: each gets its message (streamTurn) in a fiber of its own, so a slow Slack call
 * never holds up another turn's events; each goes to the chat its turn's `incoming` event names. The returned function
 * takes every runtime event, in order.
 */
export const make = (
  api: SlackApi
): Effect.Effect<(event: TurnEvent) => Effect.Effect<void>, never, Scope.Scope | ReplyPlaceholders> =>
  Effect.gen(function*() {
    const placeholders = yield* ReplyPlaceholders
    const workers = yield* FiberMap.make<string>()
    const origins = yield* makeTurnOrigins
    const turns = new Map<string, Live>()

    const start = (turnId: string, channel: string) =>
      Effect.gen(function*() {
        const live: Live = {
          view: yield* Ref.make<View>({ text: "", tool: undefined, error: undefined, final: undefined }),
          wake: yield* Queue.sliding<void>(1)
        }
        turns.set(turnId, live)
        yield* FiberMap.run(workers, turnId, streamTurn(api, placeholders, turnId, channel, live.view, live.wake))
        return live
      })

    return (event: TurnEvent) =>
      Effect.gen(function*() {
        const origin = yield* origins.of(event)
        if (Option.isNone(origin) || origin.value.interface !== slackInterface) return
        const live = turns.get(event.turnId) ?? (yield* start(event.turnId, origin.value.channel))
        const change = (f: (view: View) => View) => Effect.zipRight(Ref.update(live.view, f), Queue.offer(live.wake, undefined))
        switch (event.type) {
          case "thinking":
            return yield* change((view) => view)
          case "text-delta":
            return yield* change((view) => ({ ...view, text: view.text + event.delta, tool: undefined }))
          case "tool-call":
            // The text before a call is not the reply: the tool's line replaces it.
            return yield* change((view) => ({ ...view, text: "", tool: event.name }))
          case "error":
            return yield* change((view) => ({ ...view, error: failureTextFor(origin.value, event.message, event.failure) }))
          case "finish":
            turns.delete(event.turnId)
            return yield* change((view) => ({ ...view, final: { reply: event.reply, delivered: event.delivered } }))
          default:
            return
        }
      })
  })
