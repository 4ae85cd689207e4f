import { Effect, Option } from "effect"
import { AssistantMessage, type SessionMessage, TurnFailedMessage, UserMessage } from "../session/messages.js"
import { SessionStore } from "../session/SessionStore.js"
import { mainConversation } from "../kernel/Audience.js"
import { conversationOfChat } from "../session/conversationIds.js"
import { isDeliverable } from "../turn/replyFilter.js"
import { type Placeholder, ReplyPlaceholders } from "./ReplyPlaceholders.js"

/**
 * The reply a turn saved in the session: the turn's own last assistant message, when that one called no tools (the
 * turn was done) and is a reply to deliver (text, not NO_REPLY). None when the turn never got that far. The turn ends
 * at the first user message of another turn (a message injected into it carries its turn id), so a later turn's
 * reply, maybe another person's on another channel, is never taken for this one's. What a stopped or failed turn
 * had said (its answer followed by its `turn-failed` entry) is not a reply to deliver.
 */
export const savedReply = (messages: ReadonlyArray<SessionMessage>, turnId: string): Option.Option<string> => {
  const start = messages.findIndex((m) => m instanceof UserMessage && m.envelope?.turn === turnId)
  if (start === -1) return Option.none()
  for (let i = start + 1; i < messages.length; i++) {
    const message = messages[i]
    if (message instanceof UserMessage && message.envelope?.turn !== turnId) return Option.none()
    if (message instanceof TurnFailedMessage) return Option.none()
    if (message instanceof AssistantMessage && message.toolCalls.length === 0) {
      return isDeliverable(message.text) && !(messages[i + 1] instanceof TurnFailedMessage) ? Option.some(message.text) : Option.none()
    }
  }
  return Option.none()
}

/** What a placeholder says when its turn ended with the process that ran it. */
export const interruptedText = "kern stopped before this turn finished; send the message again if you still need an answer."

/**
 * Finishes what the last process left in `iface`'s chats, once. Called while the channel starts, before this process
 * runs a turn: the leftover placeholders and the sessions they may be in are read now; the returned effect (to fork) edits each
 * placeholder to its turn's reply when the session holds one (saved, never delivered), else to say the turn was
 * interrupted, and settles it, so no later start touches it again. A failure to edit one is logged; the rest go on.
 */
export const finishLeftovers = <E>(
  iface: string,
  finish: (placeholder: Placeholder, reply: Option.Option<string>) => Effect.Effect<void, E>,
  describe: (error: E) => string
): Effect.Effect<Effect.Effect<void>, never, ReplyPlaceholders | SessionStore> =>
  Effect.gen(function*() {
    const placeholders = yield* ReplyPlaceholders
    const leftovers = yield* placeholders.leftovers(iface)
    if (leftovers.length === 0) return Effect.void
    const store = yield* SessionStore
    // A chat's turn wrote to the operator's conversation or to the chat's own (conversationRouting.ts): both are read.
    const conversations = new Set([mainConversation, ...leftovers.map((placeholder) => conversationOfChat(iface, placeholder.channel))])
    const sessions = new Map<string, ReadonlyArray<SessionMessage>>()
    for (const conversation of conversations) {
      sessions.set(conversation, yield* store.activeIdIn(conversation).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.succeed<ReadonlyArray<SessionMessage>>([]),
          onSome: (id) => Effect.map(store.load(id), (loaded) => loaded.messages)
        }))
      ))
    }
    const replyOf = (placeholder: Placeholder) =>
      Option.orElse(
        savedReply(sessions.get(mainConversation) ?? [], placeholder.turnId),
        () => savedReply(sessions.get(conversationOfChat(iface, placeholder.channel)) ?? [], placeholder.turnId)
      )
    const logged = (what: string) => (message: string) => Effect.logWarning(`kern: ${iface}: could not ${what}: ${message}`)
    // Edit and settle as one: a shutdown waits for them (the channel's write retries bound the wait), so no start
    // edits a placeholder that an earlier one already finished.
    return Effect.forEach(leftovers, (placeholder) =>
      finish(placeholder, replyOf(placeholder)).pipe(
        Effect.catchAll((error) => logged("finish an interrupted turn's message")(describe(error))),
        Effect.zipRight(placeholders.settled(iface, placeholder.turnId)),
        Effect.catchAll((error) => logged("settle an interrupted turn's message")(error.message)),
        Effect.uninterruptible
      ), { discard: true }).pipe(Effect.withSpan("kern.channels.finishLeftovers", { attributes: { interface: iface } }))
  }).pipe(
    Effect.catchAll((error) =>
      Effect.as(Effect.logWarning(`kern: ${iface}: could not read interrupted turns' messages: ${error.message}`), Effect.void)
    )
  )
