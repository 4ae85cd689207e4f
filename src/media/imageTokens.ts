import type { Attachment } from "../session/messages.js"
import { fittedSize, type ImageBox } from "./imageLimits.js"

// What an image costs in the context, approximately as the provider counts it, at the size it is sent
// (imageLimits.ts):
// - Anthropic: about width × height / 750 tokens (docs.anthropic.com, "Vision": a 1092×1092 image ≈ 1,590).
// - OpenAI ("high" detail, GPT-4o family): 85 tokens plus 170 per 512 px tile of the fitted image.
// - Chat Completions behind an unknown router: the larger of the two.
// An image whose size is not known is priced at the largest it could be sent at. A PDF is counted by its text (the
// label and the extracted text, src/media/attachmentText.ts); where it goes as a file part, providers add a page
// image per page, which the context's per-model calibration of its estimates against reported usage takes up.

const anthropicTokens = (width: number, height: number): number => Math.ceil((width * height) / 750)

const openAiTokens = (width: number, height: number): number => 85 + 170 * Math.ceil(width / 512) * Math.ceil(height / 512)

/** The tokens of an image of `width`×`height` px once fitted into the box. */
export const imageTokens = (box: ImageBox, width: number, height: number): number => {
  const size = fittedSize(box, width, height)
  switch (box) {
    case "anthropic":
      return anthropicTokens(size.width, size.height)
    case "openai":
      return openAiTokens(size.width, size.height)
    case "both":
      return Math.max(anthropicTokens(size.width, size.height), openAiTokens(size.width, size.height))
  }
}

/** An image of unknown size: priced as the largest the box sends (a 4:3 photo far over the limits). */
const unknownSize = { width: 4000, height: 3000 }

/** The image tokens of a message's files (images only: the rest is counted as text). */
export const attachmentImageTokens = (attachments: ReadonlyArray<Attachment>, box: ImageBox): number => {
  let total = 0
  for (const attachment of attachments) {
    if (attachment.kind !== "image") continue
    const known = attachment.width !== undefined && attachment.height !== undefined
    total += imageTokens(box, known ? attachment.width! : unknownSize.width, known ? attachment.height! : unknownSize.height)
  }
  return total
}
