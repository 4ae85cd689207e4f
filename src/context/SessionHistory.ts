import { Prompt } from "@effect/ai"
import { Effect } from "effect"
import { messageOverheadTokens, sentText, toolResultInContext } from "./sentText.js"
import type { TokenCounter } from "../model/tokenizer.js"
import type { SessionMessage } from "../session/messages.js"
import type { LinePosition } from "../session/parse.js"
import { appendPromptMessage, systemMessage } from "./prompt.js"
import type { ImageBox } from "../media/imageLimits.js"
import { attachmentImageTokens } from "../media/imageTokens.js"

export interface HistoryOptions {
  readonly sessionId: string
  /** Absolute index of the first message given: the session was read from its context cut on. */
  readonly base?: number | undefined
  /** Tool results longer than this are cut in the model's copy (`maxToolResultChars`). */
  readonly maxToolResultChars: number
  /** The counter, loaded on first use (the encoder is not needed to open a session). */
  readonly count: Effect.Effect<TokenCounter>
  /** Where loaded messages' lines are in the session file, when the reader knows it (user messages). */
  readonly positions?: ReadonlyMap<SessionMessage, LinePosition> | undefined
  /** Whose limits images are sent at, for their price (imageTokens.ts); the larger of both by default. */
  readonly imageBox?: ImageBox | undefined
}

const unknownPosition: LinePosition = { byteOffset: -1, linesBefore: -1 }

/** What the context needs of the messages held: tokens as sent, and where a raw window may start. */
export interface HeldWindow {
  /** Absolute index of `tokens[0]`. */
  readonly base: number
  readonly tokens: ReadonlyArray<number>
  readonly isUser: ReadonlyArray<boolean>
}

/**
 * The messages of a session the context may still send raw: those from its cut on (the rest live in the session
 * file, the summaries and recall), held once as kern's records and once in the provider's shape (@effect/ai Prompt
 * messages, sharing the records' strings), each with its token count as sent.
 *
 * The arrays are mutated in place on purpose: a Ref of immutable arrays copies the whole history on every append,
 * and a prompt rebuilt per step converts it again. A step's `Prompt` wraps the live prompt array; turns run one at a
 * time and nothing appends while a model call reads it. When the context's cut moves on, the messages before it are
 * let go (`dropBefore`), so memory and per-turn work follow the window, not the session's length.
 */
export class SessionHistory {
  /** Absolute index of records[0]. */
  private base: number
  private readonly records: Array<SessionMessage>
  /** Tokens of each record as sent; the first `uncounted` are not counted yet (0; see `window` and `windowFrom`). */
  private readonly tokens: Array<number>
  private uncounted = 0
  private readonly isUser: Array<boolean>
  /** Where each record's line is in the session file; unknown (-1) but for user messages. */
  private readonly positions: Array<LinePosition>
  /**
   * The records from this one (relative) on are in `promptMessages`; those before it are not converted yet. A
   * session is opened with none converted: the first prompt converts only the records from where it starts (a cut,
   * at a user message), so opening a long session does not convert what the window never sends.
   */
  private promptStart: number
  /** Index in promptMessages of the prompt message each record from `promptStart` on starts or extends. */
  private readonly promptIndex: Array<number> = []
  /** Index 0 is the system prompt, replaced when it changes. */
  private readonly promptMessages: Array<Prompt.Message>
  private system: string

  private constructor(messages: ReadonlyArray<SessionMessage>, private readonly options: HistoryOptions) {
    this.base = options.base ?? 0
    this.system = ""
    this.promptMessages = [systemMessage("")]
    // What `hold` makes of each message, uncounted, made a whole array at a time: a long session's open held 10,000
    // messages one call and four pushes each.
    this.records = messages.slice()
    this.tokens = new Array<number>(this.records.length).fill(0)
    this.isUser = this.records.map((message) => message._tag === "user")
    const positions = options.positions
    this.positions = positions === undefined
      ? new Array<LinePosition>(this.records.length).fill(unknownPosition)
      : this.records.map((message) => positions.get(message) ?? unknownPosition)
    this.uncounted = this.records.length
    this.promptStart = this.records.length
  }

  static make(messages: ReadonlyArray<SessionMessage>, options: HistoryOptions): Effect.Effect<SessionHistory> {
    return Effect.sync(() => new SessionHistory(messages, options))
  }

  private countOf(count: TokenCounter, message: SessionMessage, index: number): number {
    const { maxToolResultChars, sessionId } = this.options
    const images = message._tag === "user" && message.attachments !== undefined
      ? attachmentImageTokens(message.attachments, this.options.imageBox ?? "both")
      : 0
    return count(sentText(message, maxToolResultChars, sessionId, index)) + messageOverheadTokens + images
  }

  /**
   * A session is opened without counting its messages (counting is most of the cost of opening a long one, and a
   * listing, a view or an inspection of the session needs no counts): they are counted when the window is first
   * asked for. A message appended is counted at once.
   */
  private hold(message: SessionMessage, position: LinePosition, count: TokenCounter | undefined): void {
    this.tokens.push(count === undefined ? 0 : this.countOf(count, message, this.base + this.records.length))
    this.records.push(message)
    this.isUser.push(message._tag === "user")
    this.positions.push(position)
  }

  /** Converts record `i` (relative) onto the end of the prompt. */
  private convert(i: number): void {
    const { maxToolResultChars, sessionId } = this.options
    const index = this.base + i
    const before = this.promptMessages.length
    appendPromptMessage(
      this.promptMessages,
      this.records[i]!,
      (result) => toolResultInContext(result, maxToolResultChars, { sessionId, index })
    )
    // A tool result joins the tool message of its step: it extends the last prompt message instead of adding one.
    this.promptIndex.push(this.promptMessages.length > before ? before : this.promptMessages.length - 1)
  }

  /**
   * Makes the prompt hold the records from `i` (relative) on. Records before `promptStart` are converted by
   * converting again from the user message at or before `i` (where a prompt message always begins, so the messages
   * are those a whole conversion gives from there): rare after the first prompt, since the cut only moves on.
   */
  private convertFrom(i: number): void {
    if (i >= this.promptStart) return
    let start = Math.max(0, Math.min(i, this.records.length))
    while (start > 0 && !this.isUser[start]!) start--
    this.promptMessages.length = 1
    this.promptIndex.length = 0
    this.promptStart = start
    for (let r = start; r < this.records.length; r++) this.convert(r)
  }

  private push(message: SessionMessage, position: LinePosition, count: TokenCounter | undefined): void {
    this.hold(message, position, count)
    this.convert(this.records.length - 1)
  }

  /** Appends a message just written to the session file at `position`. */
  readonly append = (message: SessionMessage, position: LinePosition = unknownPosition): Effect.Effect<void> =>
    Effect.map(this.options.count, (count) => this.push(message, position, count))

  /** The messages held (from `first` on): a view, valid until the next append or drop. */
  readonly messages: Effect.Effect<ReadonlyArray<SessionMessage>> = Effect.sync(() => this.records)

  /** Messages in the session (held or not). */
  readonly size: Effect.Effect<number> = Effect.sync(() => this.base + this.records.length)

  /** Absolute index of the first message held. */
  readonly first: Effect.Effect<number> = Effect.sync(() => this.base)

  /** The held window, every message counted. */
  readonly window: Effect.Effect<HeldWindow> = Effect.suspend(() => this.countedFrom(0))

  /**
   * The held window with the messages from `from` (absolute) on counted, and those before it perhaps not yet (their
   * counts 0 until a later window counts them): what a plan reads, from the stored cut on. A `from` past the held
   * messages counts them all, as a plan then starts over from the first. A session whose summaries are behind is held
   * from their end, 75,000 messages for a turn that sends the last few hundred: counting them all was most of a
   * one-shot `kern chat`.
   */
  readonly windowFrom = (from: number): Effect.Effect<HeldWindow> =>
    Effect.suspend(() => this.countedFrom(from > this.base + this.records.length ? 0 : from - this.base))

  /**
   * Whether the messages from `from` (absolute) on take more than `limit` tokens, counted from the newest back and no
   * further than the answer needs. Messages before the first held (a session read from its raw window) count
   * `messageOverheadTokens` each, the least any message takes: the answer is yes as soon as that alone is over.
   */
  readonly exceeds = (from: number, limit: number): Effect.Effect<boolean> =>
    Effect.suspend(() => {
      const start = Math.max(0, from - this.base)
      let total = Math.max(0, this.base - from) * messageOverheadTokens
      for (let i = this.records.length - 1; i >= Math.max(start, this.uncounted) && total <= limit; i--) total += this.tokens[i]!
      if (total > limit || start >= this.uncounted) return Effect.succeed(total > limit)
      return Effect.map(this.options.count, (count) => {
        while (this.uncounted > start && total <= limit) total += this.countOne(count)
        return total > limit
      })
    })

  /** Counts the messages from `start` (relative) on that are not counted yet, newest first. */
  private countedFrom(start: number): Effect.Effect<HeldWindow> {
    if (Math.max(0, start) >= this.uncounted) return Effect.succeed(this.held())
    return Effect.map(this.options.count, (count) => {
      while (this.uncounted > Math.max(0, start)) this.countOne(count)
      return this.held()
    })
  }

  /** Counts the newest message not counted yet (the last of the uncounted prefix); answers its count. */
  private countOne(count: TokenCounter): number {
    const i = this.uncounted - 1
    this.tokens[i] = this.countOf(count, this.records[i]!, this.base + i)
    this.uncounted = i
    return this.tokens[i]!
  }

  private held(): HeldWindow {
    return { base: this.base, tokens: this.tokens, isUser: this.isUser }
  }

  /** A held message by absolute index, with where its line is (-1 when unknown). */
  readonly at = (index: number): { readonly message: SessionMessage; readonly position: LinePosition } | undefined => {
    const i = index - this.base
    return i >= 0 && i < this.records.length ? { message: this.records[i]!, position: this.positions[i]! } : undefined
  }

  /** Held messages [from, to) by absolute index (a copy). */
  readonly slice = (from: number, to: number): ReadonlyArray<SessionMessage> =>
    this.records.slice(Math.max(0, from - this.base), Math.max(0, to - this.base))

  /**
   * Lets go of the messages before `cut` (absolute; a user message, so no tool result is parted from its call).
   * The prompt messages after it are kept as they are: the provider's wire cache knows them by identity.
   */
  readonly dropBefore = (cut: number): Effect.Effect<void> =>
    Effect.sync(() => {
      const k = Math.min(cut - this.base, this.records.length)
      if (k <= 0) return
      this.records.splice(0, k)
      this.tokens.splice(0, k)
      this.uncounted = Math.max(0, this.uncounted - k)
      this.isUser.splice(0, k)
      this.positions.splice(0, k)
      this.base += k
      if (k <= this.promptStart) {
        this.promptStart -= k
        return
      }
      const converted = k - this.promptStart
      const firstPrompt = converted < this.promptIndex.length ? this.promptIndex[converted]! : this.promptMessages.length
      const dropped = firstPrompt - 1
      this.promptIndex.splice(0, converted)
      this.promptMessages.splice(1, dropped)
      for (let i = 0; i < this.promptIndex.length; i++) this.promptIndex[i]! -= dropped
      this.promptStart = 0
    })

  /** The prompt for the next model call: `system`, then the messages held from `from` (absolute) on, no copy made when from is the first held. */
  readonly prompt = (system: string, from?: number): Effect.Effect<Prompt.Prompt> =>
    Effect.sync(() => {
      if (system !== this.system) {
        this.system = system
        this.promptMessages[0] = systemMessage(system)
      }
      const start = this.promptStartOf(from)
      if (start <= 1) return Prompt.fromMessages(this.promptMessages)
      return Prompt.fromMessages([this.promptMessages[0]!, ...this.promptMessages.slice(start)])
    })

  /** Where in `promptMessages` the prompt from `from` (absolute) starts, converting what it needs first. */
  private promptStartOf(from: number | undefined): number {
    const i = Math.max(0, from === undefined ? 0 : from - this.base)
    if (i >= this.records.length) return this.records.length === 0 ? 1 : this.promptMessages.length
    this.convertFrom(i)
    return i === this.promptStart ? 1 : this.promptIndex[i - this.promptStart]!
  }

  /**
   * The same prompt as `prompt`, in a fresh array that leaves the live one alone: for an inspection, which may run
   * while a model call reads the live prompt.
   */
  readonly promptCopy = (system: string, from?: number): Effect.Effect<Prompt.Prompt> =>
    Effect.sync(() => {
      const start = this.promptStartOf(from)
      return Prompt.fromMessages([systemMessage(system), ...this.promptMessages.slice(Math.max(1, start))])
    })
}
