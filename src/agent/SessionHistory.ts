import { Prompt } from "@effect/ai"
import { Effect } from "effect"
import type { SessionMessage } from "../session/messages.js"
import { appendPromptMessage, systemMessage } from "./prompt.js"

/**
 * A session's messages in memory, held once as kern's records and once in the provider's shape (@effect/ai Prompt
 * messages, sharing the records' strings), both only ever appended to.
 *
 * The arrays are mutated in place on purpose: a Ref of immutable arrays copies the whole history on every append,
 * and a prompt rebuilt per step converts it again, so a 75,000-message session cost seconds per turn. A step's
 * `Prompt` wraps the live prompt array; turns run one at a time and nothing appends while a model call reads it.
 */
export class SessionHistory {
  private readonly records: Array<SessionMessage>
  /** Index 0 is the system prompt, replaced when it changes. */
  private readonly promptMessages: Array<Prompt.Message>
  private system: string

  private constructor(messages: ReadonlyArray<SessionMessage>) {
    this.records = [...messages]
    this.system = ""
    this.promptMessages = [systemMessage("")]
    for (const message of messages) appendPromptMessage(this.promptMessages, message)
  }

  static make(messages: ReadonlyArray<SessionMessage>): Effect.Effect<SessionHistory> {
    return Effect.sync(() => new SessionHistory(messages))
  }

  readonly append = (message: SessionMessage): Effect.Effect<void> =>
    Effect.sync(() => {
      this.records.push(message)
      appendPromptMessage(this.promptMessages, message)
    })

  /** The messages so far: a view, valid until the next append. */
  readonly messages: Effect.Effect<ReadonlyArray<SessionMessage>> = Effect.sync(() => this.records)

  readonly size: Effect.Effect<number> = Effect.sync(() => this.records.length)

  /** The prompt for the next model call: `system`, then the whole history, no copy made. */
  readonly prompt = (system: string): Effect.Effect<Prompt.Prompt> =>
    Effect.sync(() => {
      if (system !== this.system) {
        this.system = system
        this.promptMessages[0] = systemMessage(system)
      }
      return Prompt.fromMessages(this.promptMessages)
    })
}
