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

/** A read result that carries an image. */
export const ReadImageResult = Schema.Struct({ kind: Schema.Literal("image"), image: ReadImage })

export const isReadImageResult = Schema.is(ReadImageResult)
