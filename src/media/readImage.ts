import { Schema } from "effect"

/**
 * An image the `read` tool read in the workspace, as its result records it (src/tools/read.ts): where it is and the
 * sha256 of the bytes it read. The result holds this reference, never the bytes; each turn's prompt reads the file
 * again and sends it only while its bytes are still those (src/media/promptMedia.ts), so a file replaced since (or
 * a path swapped for a link to something else) is never what the model is shown.
 */
export const ReadImage = Schema.Struct({
  /** The absolute path the tool read, inside the run's workspace. */
  file: Schema.String,
  /** The path as the tool showed it. */
  name: Schema.String,
  sha256: Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/)),
  mediaType: Schema.String,
  bytes: Schema.Number,
  width: Schema.optional(Schema.Number),
  height: Schema.optional(Schema.Number)
})
export type ReadImage = typeof ReadImage.Type

/**
 * The line a read result of an image ends with. A session keeps a tool's result as text, so the reference travels
 * in it; each turn's prompt replaces the whole result with a line of its own (shown, or why not), so a model never
 * reads this one.
 */
export const imageReferenceLine = (image: ReadImage): string => `[image reference: ${JSON.stringify(image)}]`

const referenced = /^[^\n]*: image\/[a-z0-9.+-]+ image, [^\n]*\n\[image reference: (\{[^\n]*\})\]$/

const decodeReference = Schema.decodeUnknownOption(Schema.parseJson(ReadImage))

/**
 * The image a `read` result refers to: only a result of the read tool, in the exact two lines it writes (a
 * description, then the reference); anything else (a text file that holds such a line, another tool's output) is
 * no reference. The bytes are sent only if their sha256 is still the one recorded.
 */
export const readImageOf = (toolName: string, result: unknown): ReadImage | undefined => {
  if (toolName !== "read" || typeof result !== "string") return undefined
  const match = referenced.exec(result)
  if (match === null) return undefined
  const decoded = decodeReference(match[1])
  return decoded._tag === "Some" ? decoded.value : undefined
}
