import type { HttpClient } from "@effect/platform"
import { NodeSocket } from "@effect/platform-node"
import { Effect, Layer, Option, PubSub, Queue, Ref } from "effect"
import { AgentRuntime } from "../../runtime/AgentRuntime.js"
import { Approvals } from "../../runtime/Approvals.js"
import { Inbox } from "../../runtime/Inbox.js"
import { AgentConfig } from "../../config/AgentConfig.js"
import { PairingStore } from "../../users/PairingStore.js"
import { SpendGuard } from "../../model/SpendGuard.js"
import { TurnStops } from "../../turn/TurnStops.js"
import { ChannelError, Channels, makeStatusCell, type OutgoingFile } from "../../tools/Channels.js"
import { MediaStore } from "../../media/MediaStore.js"
import { uploadFile } from "./files.js"
import * as ApprovalPosts from "./ApprovalPosts.js"
import * as QuestionPosts from "./QuestionPosts.js"
import { Questions } from "../../tools/Questions.js"
import * as Connection from "./Connection.js"
import * as Inbound from "./Inbound.js"
import { toMrkdwn } from "./mrkdwn.js"
import type { SqlClient } from "@effect/sql"
import type { SessionStore } from "../../session/SessionStore.js"
import { finishLeftovers } from "../leftoverReplies.js"
import * as ReplyPlaceholders from "../ReplyPlaceholders.js"
import * as Replies from "./Replies.js"
import { slackInterface } from "./Replies.js"
import * as SlackApi from "./SlackApi.js"
import { splitMessage } from "./split.js"
import { decodeTarget, isUserId, postFields } from "./target.js"
import { AuthTest, ConversationsOpen, Posted } from "./wire.js"

export { defaultApiUrl } from "./SlackApi.js"

const channelError = (error: SlackApi.SlackApiError) =>
  new ChannelError({
    interface: slackInterface,
    reason: error.fatal ? "unauthorized" : error.error === "network" || error.error.startsWith("http_") ? "network" : "rejected",
    message: error.message
  })

/**
 * Whether the agent's environment turns the Slack channel on (both tokens set). A host keeps such an agent live:
 * Socket Mode delivers an event only to a connected app, so a passive agent would miss its messages.
 */
export const configured = (env: Readonly<Record<string, string | undefined>>): boolean =>
  (env["SLACK_BOT_TOKEN"] ?? "") !== "" && (env["SLACK_APP_TOKEN"] ?? "") !== ""

const make = Effect.gen(function*() {
  const { env } = yield* AgentConfig
  const botToken = env["SLACK_BOT_TOKEN"] ?? ""
  const appToken = env["SLACK_APP_TOKEN"] ?? ""
  if (!configured(env)) {
    if (botToken !== "" || appToken !== "") {
      yield* Effect.logWarning("kern: Slack needs both SLACK_BOT_TOKEN (xoxb-…) and SLACK_APP_TOKEN (xapp-…); the Slack channel is off")
    }
    return
  }
  const api = yield* SlackApi.make({ apiUrl: env["SLACK_API_URL"] || SlackApi.defaultApiUrl, botToken, appToken })
  const runtime = yield* AgentRuntime
  const approvals = yield* Approvals
  const channels = yield* Channels
  const status = yield* makeStatusCell(slackInterface)

  // Subscribed now, while the layer is built: before the runtime serves the turn whose events these are.
  const events = yield* PubSub.subscribe(runtime.events)
  // What the last process left half-done in chats, read before this one runs a turn, finished in the background.
  yield* Effect.forkScoped(yield* finishLeftovers(slackInterface, Replies.finishPlaceholder(api), () => ""))
  const onEvent = yield* Replies.make(api)
  yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(events), onEvent)))
  yield* ApprovalPosts.start(api, approvals)
  const questions = yield* Questions
  const questionPosts = yield* QuestionPosts.start(api, questions)
  // Slack turns may ask their person questions while the channel runs.
  yield* questions.showOn(slackInterface)

  // auth.test names the bot (so its own messages are not taken); asked before each connection until it answers.
  const botUserId = yield* Ref.make(Option.none<string>())
  const identify = Effect.flatMap(Ref.get(botUserId), (known) =>
    Option.isSome(known)
      ? Effect.void
      : Effect.flatMap(api.call("auth.test", {}, AuthTest), (auth) => Ref.set(botUserId, Option.some(auth.user_id))))
  const inbound = yield* Inbound.make({
    api,
    runtime,
    inbox: yield* Inbox,
    pairings: yield* PairingStore,
    approvals,
    questions: questionPosts,
    stops: yield* TurnStops,
    spend: yield* SpendGuard,
    // Envelopes arrive only on a connection, and connecting waits for auth.test.
    botUserId: Effect.map(Ref.get(botUserId), Option.getOrElse(() => "")),
    media: yield* MediaStore
  })
  const onEnvelope = (type: string, payload: unknown) =>
    type === "events_api" ? inbound.onEvent(payload) : type === "interactive" ? inbound.onInteractive(payload) : Effect.void
  yield* Effect.forkScoped(Connection.supervise({ api, setStatus: status.set, onEnvelope }, identify))

  /** Where a chat id sends to: a DM opened with a user id, or a conversation (and thread). */
  const targetOf = (chatId: string) =>
    Effect.gen(function*() {
      const current = yield* status.get
      if (current.state === "stopped") {
        return yield* new ChannelError({ interface: slackInterface, reason: "not_connected", message: `Slack is stopped: ${current.detail}` })
      }
      return isUserId(chatId)
        ? { channel: (yield* api.call("conversations.open", { users: chatId }, ConversationsOpen)).channel.id }
        : decodeTarget(chatId)
    })
  const send = (chatId: string, text: string) =>
    Effect.gen(function*() {
      const target = yield* targetOf(chatId)
      for (const chunk of splitMessage(toMrkdwn(text))) {
        yield* api.call("chat.postMessage", { ...postFields(target), text: chunk }, Posted)
      }
    }).pipe(Effect.catchTag("SlackApiError", (error) => Effect.fail(channelError(error))), Effect.withSpan("kern.slack.send"))
  const sendFile = (chatId: string, file: OutgoingFile, caption: string) =>
    Effect.gen(function*() {
      const target = yield* targetOf(chatId)
      // A caption past a comment's length goes first as messages of its own.
      const long = caption.length > 4000
      if (long) yield* send(chatId, caption)
      yield* uploadFile(api, target, file, long ? "" : toMrkdwn(caption))
    }).pipe(Effect.catchTag("SlackApiError", (error) => Effect.fail(channelError(error))), Effect.withSpan("kern.slack.sendFile"))

  yield* channels.register({ interface: slackInterface, status: status.get, send, sendFile })
})

/**
 * The Slack channel: off unless both SLACK_BOT_TOKEN and SLACK_APP_TOKEN are set; otherwise DMs and mentions over
 * Socket Mode become turns, replies stream back, approvals get buttons. A failing Slack is logged and retried, and
 * never stops the agent.
 */
export const layer: Layer.Layer<
  never,
  never,
  Channels | AgentRuntime | TurnStops | Inbox | PairingStore | Approvals | Questions | AgentConfig | HttpClient.HttpClient | SessionStore | SqlClient.SqlClient | SpendGuard | MediaStore
> = Layer.scopedDiscard(make).pipe(Layer.provide(Layer.merge(NodeSocket.layerWebSocketConstructor, ReplyPlaceholders.layerSql)))
