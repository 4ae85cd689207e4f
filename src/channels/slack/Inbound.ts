import { Effect, Option, Ref, Schema } from "effect"
import type { AgentRuntime } from "../../runtime/AgentRuntime.js"
import { type ApprovalError, type ApprovalsShape, channelUser } from "../../runtime/Approvals.js"
import type { Cursor, InboxShape } from "../../runtime/Inbox.js"
import type { TurnStops } from "../../turn/TurnStops.js"
import type { PairingStore } from "../../users/PairingStore.js"
import { chatStop, isStopCommand } from "../chatStop.js"
import { chatUsage, isUsageCommand } from "../chatUsage.js"
import type { SpendGuardShape } from "../../model/SpendGuard.js"
import { approveAction, denyAction } from "./approvalMessages.js"
import { questionActions, type QuestionPosts } from "./QuestionPosts.js"
import { unescapeSlack } from "./mrkdwn.js"
import { slackInterface } from "./Replies.js"
import { type SlackApi, SlackApiError } from "./SlackApi.js"
import type { MediaStoreShape } from "../../media/MediaStore.js"
import { fetchFiles } from "./files.js"
import { splitMessage } from "./split.js"
import { encodeTarget, postFields, type Target } from "./target.js"
import { decodeBlockActions, decodeEventCallback, Posted, SeenIds, type SlackEvent, type SlackFile } from "./wire.js"

/** The inbox cursor holding the event ids taken lately, written with each message (see Inbox.add). */
export const seenKey = "slack:seen"
/** Slack redelivers an envelope for minutes, not days: the last few hundred ids cover every redelivery. */
export const seenLimit = 500

/** A message for the agent: from whom, where to answer, and what it says. */
interface Taken {
  readonly target: Target
  readonly userId: string
  readonly text: string
  /** Files shared with it (a `file_share` message, or a mention with files). */
  readonly files: ReadonlyArray<SlackFile>
}

/**
 * The events kern answers: a person's message in a DM, and a person's mention of the bot in a channel (answered in
 * its thread). Edits, bot messages, the bot's own messages and channel chatter are not.
 */
export const classify = (event: SlackEvent, botUserId: string): Option.Option<Taken> => {
  const user = event.user
  // A message with files is `file_share`; any other subtype (an edit, a join, a bot's post) is not a person's message.
  const subtypeOk = event.subtype === undefined || event.subtype === "file_share"
  if (user === undefined || user === botUserId || event.bot_id !== undefined || !subtypeOk) return Option.none()
  const files = event.files ?? []
  if (event.channel === undefined || (event.text === undefined && files.length === 0)) return Option.none()
  const said = event.text ?? ""
  if (event.type === "message" && event.channel_type === "im") {
    return Option.some({ target: { channel: event.channel }, userId: user, text: unescapeSlack(said), files })
  }
  if (event.type === "app_mention" && event.ts !== undefined) {
    const text = unescapeSlack(said.split(`<@${botUserId}>`).join("").replace(/\s+/g, " ").trim())
    return Option.some({ target: { channel: event.channel, threadTs: event.thread_ts ?? event.ts }, userId: user, text, files })
  }
  return Option.none()
}

export const pairingText = (code: string) =>
  `I only talk to people my operator has paired. Ask the operator to run \`kern pair ${code}\` (the code works for 24 hours).`

export interface InboundDeps {
  readonly api: SlackApi
  readonly runtime: AgentRuntime
  readonly inbox: InboxShape
  readonly pairings: PairingStore
  readonly approvals: ApprovalsShape
  readonly questions: QuestionPosts
  readonly stops: TurnStops
  /** `/usage`: today's spend against the caps. */
  readonly spend: SpendGuardShape
  readonly botUserId: Effect.Effect<string>
  readonly media: MediaStoreShape
}

const logFailure = (what: string) => (error: { readonly message: string }) =>
  Effect.logWarning(`kern: Slack: could not ${what}: ${error.message}`)

/**
 * What an envelope does. A message is acknowledged (by the caller) only once this succeeds, that is once it is in
 * the inbox with its event id in the seen cursor: a failure leaves it unacknowledged and Slack delivers it again;
 * a redelivery of a message taken before (even by an earlier process) is skipped.
 */
export const make = (deps: InboundDeps) =>
  Effect.gen(function*() {
    const stored = yield* deps.inbox.cursor(seenKey).pipe(
      Effect.catchTag("InboxError", (error) =>
        Effect.as(Effect.logWarning(`kern: Slack: ${error.message}; redelivered events may be answered twice`), Option.none<string>()))
    )
    const initial = yield* Option.match(stored, {
      onNone: () => Effect.succeed<ReadonlyArray<string>>([]),
      onSome: (value) =>
        Schema.decode(SeenIds)(value).pipe(
          Effect.catchTag("ParseError", (error) =>
            Effect.as(Effect.logWarning(`kern: Slack: the ${seenKey} cursor is unreadable, starting afresh: ${error.message}`), []))
        )
    })
    const seen = yield* Ref.make<ReadonlyArray<string>>(initial)

    /** A stranger is told how to pair, privately: in their DM, or visible only to them in a channel's thread. */
    const tellStranger = (taken: Taken) =>
      Effect.gen(function*() {
        // Where to reach them later: their DM, or (met in a channel) their user id, which `send` opens a DM with.
        const chatId = taken.target.threadTs === undefined ? taken.target.channel : taken.userId
        const pairing = yield* deps.pairings.request({ interface: slackInterface, userId: taken.userId, chatId })
        const text = pairingText(pairing.code)
        yield* (taken.target.threadTs === undefined
          ? deps.api.call("chat.postMessage", { channel: taken.target.channel, text }, Posted)
          : deps.api.call("chat.postEphemeral", { channel: taken.target.channel, thread_ts: taken.target.threadTs, user: taken.userId, text }, Schema.Unknown)
        ).pipe(Effect.catchAll(logFailure("send a pairing code")))
      })

    const onEvent = (payload: unknown) =>
      Effect.gen(function*() {
        const callback = yield* decodeEventCallback(payload).pipe(Effect.option)
        if (Option.isNone(callback)) return yield* Effect.logDebug("kern: Slack: an events_api envelope that is not an event_callback")
        const { event, event_id: eventId } = callback.value
        const before = yield* Ref.get(seen)
        if (before.includes(eventId)) return yield* Effect.logDebug(`kern: Slack: ${eventId} redelivered, already taken`)
        const after = [...before, eventId].slice(-seenLimit)
        const cursor: Cursor = { key: seenKey, value: JSON.stringify(after) }
        const taken = classify(event, yield* deps.botUserId)
        if (Option.isNone(taken)) {
          yield* deps.inbox.setCursor(cursor)
        } else if (yield* deps.pairings.isApproved(slackInterface, taken.value.userId)) {
          const { files, target, userId, text } = taken.value
          if (files.length > 0) {
            const post = (answer: string) =>
              deps.api.call("chat.postMessage", { ...postFields(target), text: answer }, Posted).pipe(
                Effect.asVoid,
                Effect.catchAll(logFailure("say why a file was refused"))
              )
            // A failure that may pass fails the event: unacknowledged, Slack delivers it again and it is fetched then.
            const attachments = yield* fetchFiles(deps.api, deps.media, files).pipe(
              Effect.catchTag("FilesRefused", (refused) => Effect.as(post(refused.text), undefined)),
              Effect.mapError((failed) => new SlackApiError({ method: "files", error: "network", message: failed.message }))
            )
            if (attachments === undefined) {
              yield* deps.inbox.setCursor(cursor)
            } else {
              yield* deps.runtime.submit({ interface: slackInterface, channel: encodeTarget(target), userId, text, attachments }, cursor)
            }
          } else if (isStopCommand(text)) {
            // A command to kern, not a message: answered where it was typed, never queued nor sent to the model.
            yield* deps.inbox.setCursor(cursor)
            const answer = yield* chatStop(deps.stops, deps.pairings, slackInterface, encodeTarget(target), userId)
            yield* deps.api.call("chat.postMessage", {
              channel: target.channel,
              text: answer,
              ...(target.threadTs === undefined ? {} : { thread_ts: target.threadTs })
            }, Posted).pipe(Effect.asVoid, Effect.catchAll(logFailure("answer /stop")))
          } else if (isUsageCommand(text)) {
            yield* deps.inbox.setCursor(cursor)
            const answer = yield* chatUsage(deps.spend, deps.pairings, {
              iface: slackInterface,
              channel: encodeTarget(target),
              userId,
              // A DM is answered in it; a mention in a channel is answered in its thread, for the channel to read.
              privateChat: target.threadTs === undefined
            })
            // An operator's whole day may outgrow one message: posted in pieces.
            yield* Effect.forEach(splitMessage(answer), (chunk) =>
              deps.api.call("chat.postMessage", {
                channel: target.channel,
                text: chunk,
                ...(target.threadTs === undefined ? {} : { thread_ts: target.threadTs })
              }, Posted)).pipe(Effect.asVoid, Effect.catchAll(logFailure("answer /usage")))
          } else if (yield* deps.questions.typed(encodeTarget(target), userId, text)) {
            // The answer to a question its turn asked this person here: not a new message.
            yield* deps.inbox.setCursor(cursor)
          } else {
            yield* deps.runtime.submit({ interface: slackInterface, channel: encodeTarget(target), userId, text }, cursor)
          }
        } else {
          yield* deps.inbox.setCursor(cursor)
          yield* tellStranger(taken.value)
        }
        yield* Ref.set(seen, after)
      })

    /** A button press: an operator's approve or deny; anyone else is told why nothing happened, privately. */
    const onInteractive = (payload: unknown) =>
      Effect.gen(function*() {
        const actions = yield* decodeBlockActions(payload).pipe(Effect.option)
        if (Option.isNone(actions)) return yield* Effect.logDebug("kern: Slack: an interactive envelope kern does not handle")
        const { user, channel, container } = actions.value
        for (const action of actions.value.actions) {
          if (questionActions.has(action.action_id) && action.value !== undefined) {
            yield* deps.questions.pressed({ action_id: action.action_id, value: action.value }, user.id, channel?.id, container?.thread_ts)
            continue
          }
          if ((action.action_id !== approveAction && action.action_id !== denyAction) || action.value === undefined) continue
          yield* deps.approvals.decide(action.value, action.action_id === approveAction, channelUser(slackInterface, user.id)).pipe(
            Effect.asVoid,
            Effect.catchTag("ApprovalError", (error: ApprovalError) =>
              channel === undefined ? Effect.logWarning(`kern: Slack: ${error.message}`) : deps.api.call("chat.postEphemeral", {
                channel: channel.id,
                user: user.id,
                text: error.message,
                ...(container?.thread_ts === undefined ? {} : { thread_ts: container.thread_ts })
              }, Schema.Unknown).pipe(Effect.asVoid, Effect.catchAll(logFailure("answer a button")))
            )
          )
        }
      })

    return { onEvent, onInteractive } as const
  })
