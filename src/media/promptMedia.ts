import { Prompt } from "@effect/ai"
import { FileSystem } from "@effect/platform"
import { Effect, Either } from "effect"
import * as NodeCrypto from "node:crypto"
import type { Attachment } from "../session/messages.js"
import { attachmentAsText, imageNote, type NotShown, notShownText, partLabel, readImageLine } from "./attachmentText.js"
import { fitImage, type FittedImage } from "./fitImage.js"
import { boxOf, type ImageBox, type ModelWire } from "./imageLimits.js"
import { prunedText } from "./MediaRejected.js"
import { MediaStore } from "./MediaStore.js"
import { carriedAttachments } from "./promptAttachments.js"
import { type ReadImage, readImageOf } from "./readImage.js"
import { keptSpan } from "../kernel/keptSpan.js"

// What a step's model is sent of the files in its window. The context holds every file in its text form
// (src/context/prompt.ts); here the newest images and PDFs become image and file parts (@effect/ai's
// Prompt.FilePart, which each provider encodes in its own shape), fitted to the provider's limits, and the rest say
// in a note why they are not shown.

/**
 * The images and PDFs sent as parts: the newest this many of the window. Older ones become notes, so a long
 * conversation with photos does not send (and pay for) every photo again at every step; the model can still `read`
 * a workspace image again, and the note names each file.
 */
export const sentVisualParts = 6

/** PDFs larger than this, or longer, go as their text: Anthropic takes at most 100 pages and 32 MB a request. */
export const pdfPartMaxBytes = 10 * 1024 * 1024
export const pdfPartMaxPages = 100

/** Fitted images kept between steps and turns (a few MB): re-encoding a 12 MP photo takes 0.3–0.8 s here. */
const fittedKept = 32

/** Who a step's prompt is for. */
export interface MediaTarget {
  /** Whether the model takes images (src/model/visionModels.ts modelSees). */
  readonly sees: boolean
  readonly wire: ModelWire
  readonly provider: string
}

/**
 * Whether the endpoint takes a PDF as a file part: Anthropic (`document` blocks), the Responses API (`input_file`),
 * and Chat Completions at OpenAI and OpenRouter (a `file` part with `file_data`). Other Chat Completions servers
 * (Ollama, vLLM, llama.cpp) take images at most: they get the PDF's text.
 */
export const takesPdfParts = (target: MediaTarget): boolean =>
  target.wire !== "chat" || target.provider === "openai" || target.provider === "openrouter"

const pdfFits = (attachment: Attachment) =>
  attachment.bytes <= pdfPartMaxBytes && (attachment.pages ?? 0) <= pdfPartMaxPages

/** How one image or PDF goes: as a part, or a note of why not. */
type Decision = "part" | "older" | "cannot-see"

const noOptions: Prompt.ProviderOptions = Object.freeze({})

const textPart = (text: string): Prompt.TextPart => ({ [Prompt.PartTypeId]: Prompt.PartTypeId, type: "text", text, options: noOptions })

const filePart = (data: Uint8Array, mediaType: string, fileName: string): Prompt.FilePart => ({
  [Prompt.PartTypeId]: Prompt.PartTypeId,
  type: "file",
  mediaType,
  fileName,
  data,
  options: noOptions
})

const userMessage = (content: ReadonlyArray<Prompt.UserMessagePart>, options: Prompt.ProviderOptions): Prompt.UserMessage => ({
  [Prompt.MessageTypeId]: Prompt.MessageTypeId,
  role: "user",
  content,
  options
})

const why = (decision: Exclude<Decision, "part">): NotShown =>
  decision === "older" ? { reason: "older", kept: sentVisualParts } : { reason: "cannot-see" }

const sha256Of = (bytes: Uint8Array) => NodeCrypto.createHash("sha256").update(bytes).digest("hex")

export const makePromptMedia = Effect.gen(function*() {
  const store = yield* MediaStore
  const fs = yield* FileSystem.FileSystem
  /** What each message was last made into, by the decisions it was made with: a step sends the same values as the last. */
  const rendered = new WeakMap<Prompt.Message, Map<string, ReadonlyArray<Prompt.Message>>>()
  /** Fitted images (or why one could not be), by content and box, newest last. */
  const fitted = new Map<string, Either.Either<FittedImage, string>>()

  const fitCached = (key: string, bytes: Effect.Effect<Uint8Array, string>, box: ImageBox) =>
    Effect.gen(function*() {
      const known = fitted.get(key)
      if (known !== undefined) return known
      const result = yield* Effect.either(
        Effect.flatMap(bytes, (data) => Effect.mapError(fitImage(data, box), (error) => `it could not be read as an image (${error.message})`))
      )
      fitted.set(key, result)
      if (fitted.size > fittedKept) fitted.delete(fitted.keys().next().value!)
      return result
    })

  const attachmentParts = (attachment: Attachment, decision: Decision | undefined, box: ImageBox) =>
    Effect.gen(function*(): Effect.fn.Return<ReadonlyArray<Prompt.UserMessagePart>> {
      if (decision === undefined) return [textPart(attachmentAsText(attachment))]
      if (decision !== "part") {
        return [textPart(attachment.kind === "image" ? imageNote(attachment, why(decision)) : attachmentAsText(attachment))]
      }
      const stored = Effect.mapError(store.read(attachment.id), (error) =>
        error.prunedAtMs === undefined ? "it is no longer in the media store" : `it was ${prunedText(error.prunedAtMs)}`)
      if (attachment.kind === "pdf") {
        const bytes = yield* Effect.either(stored)
        return Either.isRight(bytes)
          ? [textPart(partLabel(attachment)), filePart(bytes.right, "application/pdf", attachment.name)]
          : [textPart(attachmentAsText(attachment))]
      }
      const image = yield* fitCached(`${attachment.id}:${box}`, stored, box)
      return Either.isRight(image)
        ? [textPart(partLabel(attachment)), filePart(image.right.data, image.right.mediaType, attachment.name)]
        : [textPart(imageNote(attachment, { reason: "unreadable", detail: image.left }))]
    })

  /** The bytes of a workspace image the read tool read, only while they are the ones it read. */
  const readBytes = (image: ReadImage): Effect.Effect<Uint8Array, string> =>
    fs.readFile(image.file).pipe(
      Effect.mapError(() => "the file can no longer be read"),
      Effect.filterOrFail((bytes) => sha256Of(bytes) === image.sha256, () => "the file changed since it was read")
    )

  const toolMessages = (message: Prompt.ToolMessage, decisions: ReadonlyArray<Decision | undefined>, box: ImageBox) =>
    Effect.gen(function*() {
      const follow: Array<Prompt.UserMessagePart> = []
      const parts: Array<Prompt.ToolResultPart> = []
      for (let i = 0; i < message.content.length; i++) {
        const part = message.content[i]!
        const decision = decisions[i]
        const image = decision === undefined ? undefined : readImageOf(part.name, part.result)
        if (decision === undefined || image === undefined) {
          parts.push(part)
          continue
        }
        // The whole result is replaced: the model reads this line, never the reference.
        const note = (text: string) => parts.push({ ...part, result: readImageLine(image, [text]) })
        if (decision !== "part") {
          note(notShownText(why(decision)))
          continue
        }
        const fittedImage = yield* fitCached(`${image.sha256}:${box}`, readBytes(image), box)
        if (Either.isLeft(fittedImage)) {
          note(`not shown: ${fittedImage.left}`)
          continue
        }
        note("shown in the message after this result")
        follow.push(
          textPart(readImageLine(image, ["read by the read tool"])),
          filePart(fittedImage.right.data, fittedImage.right.mediaType, image.name)
        )
      }
      const tool: Prompt.ToolMessage = { ...message, content: parts }
      // A tool result is text on two of the three wires: the image goes in a user message right after the results.
      return follow.length === 0 ? [tool] : [tool, userMessage(follow, noOptions)]
    })

  /**
   * The messages as `target`'s model is sent them: the same array when no message carries an image or file, else a
   * copy with each such message made into what the model takes (the same values from step to step, so providers'
   * per-message encoders and caches keep their work).
   */
  const render = (messages: ReadonlyArray<Prompt.Message>, target: MediaTarget) =>
    Effect.gen(function*() {
      const box = boxOf(target.wire, target.provider)
      const pdfParts = target.sees && takesPdfParts(target)
      // The decisions of each message's images and PDFs, by part index, newest first against the budget.
      const decisions = new Map<number, Array<Decision | undefined>>()
      let budget = sentVisualParts
      const decide = (): Decision => !target.sees ? "cannot-see" : budget-- > 0 ? "part" : "older"
      for (let m = messages.length - 1; m >= 0; m--) {
        const message = messages[m]!
        if (message.role === "user") {
          const attachments = carriedAttachments(message)
          if (attachments.length === 0) continue
          const row: Array<Decision | undefined> = new Array(attachments.length).fill(undefined)
          for (let i = attachments.length - 1; i >= 0; i--) {
            const attachment = attachments[i]!
            if (attachment.kind === "image") row[i] = decide()
            else if (attachment.kind === "pdf" && pdfParts && pdfFits(attachment)) row[i] = decide() === "part" ? "part" : undefined
          }
          decisions.set(m, row)
        } else if (message.role === "tool") {
          let row: Array<Decision | undefined> | undefined
          for (let i = message.content.length - 1; i >= 0; i--) {
            const part = message.content[i]!
            if (readImageOf(part.name, part.result) === undefined) continue
            row ??= new Array(message.content.length).fill(undefined)
            row[i] = decide()
          }
          if (row !== undefined) decisions.set(m, row)
        }
      }
      if (decisions.size === 0) return messages
      const out: Array<Prompt.Message> = []
      for (let m = 0; m < messages.length; m++) {
        const message = messages[m]!
        const row = decisions.get(m)
        if (row === undefined) {
          out.push(message)
          continue
        }
        const key = `${box}:${row.map((d) => d?.[0] ?? "-").join("")}`
        let forms = rendered.get(message)
        const known = forms?.get(key)
        if (known !== undefined) {
          out.push(...known)
          continue
        }
        const made: ReadonlyArray<Prompt.Message> = message.role === "user"
          ? yield* Effect.map(
            Effect.forEach(carriedAttachments(message), (attachment, i) => attachmentParts(attachment, row[i], box)),
            (parts) => [userMessage([...parts.flat(), ...message.content.slice(parts.length)], message.options)]
          )
          : message.role === "tool"
          ? yield* toolMessages(message, row, box)
          : [message]
        // Only the latest form is kept: the window moves on, and an older form holds image bytes no step sends again.
        if (forms === undefined) {
          forms = new Map()
          rendered.set(message, forms)
        }
        forms.clear()
        forms.set(key, made)
        out.push(...made)
      }
      return out
    }).pipe(keptSpan("kern.media.render"))

  return { render } as const
})

export type PromptMedia = Effect.Effect.Success<typeof makePromptMedia>
