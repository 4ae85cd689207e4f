import type { Prompt } from "@effect/ai"
import type { Attachment } from "../session/messages.js"

// A user message's files ride on its prompt message, in its provider options under `kern` (no provider reads that
// key: @effect/ai's providers read their own name, kern's Chat Completions encoder `anthropic`): the context builds
// the message's text form once (src/context/prompt.ts), and each turn's step swaps in what its model is sent
// (src/media/promptMedia.ts), finding the files where the message is.

interface KernOptions {
  readonly attachments?: ReadonlyArray<Attachment>
}

/** Provider options that carry `attachments`. */
export const carrying = (attachments: ReadonlyArray<Attachment>): Prompt.ProviderOptions => ({
  kern: { attachments } satisfies KernOptions
})

/** The files a prompt message carries (none for most). */
export const carriedAttachments = (message: Prompt.Message): ReadonlyArray<Attachment> => {
  const kern = message.options["kern"] as KernOptions | undefined
  return kern?.attachments ?? []
}
