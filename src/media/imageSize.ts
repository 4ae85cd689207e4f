import { Effect } from "effect"

/** The most pixels kern decodes of an image (about 8000 × 6000): a larger one is refused, not decoded. */
export const maxImagePixels = 50_000_000

/** What sharp read of an image: its size, or why it is not one it can read. */
export type ImageSize =
  | { readonly _tag: "Read"; readonly width: number; readonly height: number }
  | { readonly _tag: "Unreadable"; readonly detail: string }

/**
 * An image's width and height, once sharp (libvips, on its own threads, not the event loop) has decoded it whole: a
 * header alone is not enough, a truncated or corrupt file is refused (`failOn: "warning"`), and so is an image over
 * maxImagePixels (a decompression bomb). Decoding goes through a small thumbnail, so it costs little memory.
 */
export const imageSize = (bytes: Uint8Array): Effect.Effect<ImageSize> =>
  Effect.promise(async (): Promise<ImageSize> => {
    const options = { failOn: "warning", limitInputPixels: maxImagePixels } as const
    try {
      // Loaded on first use, as fitImage does: sharp's native module takes about a second to load, which an agent
      // that is never sent an image never pays (the media store is built with every running agent).
      const sharp = (await import("sharp")).default
      const metadata = await sharp(bytes, options).metadata()
      await sharp(bytes, options).resize(16, 16, { fit: "inside" }).raw().toBuffer()
      const width = metadata.autoOrient?.width ?? metadata.width
      const height = metadata.autoOrient?.height ?? metadata.height
      if (width === undefined || height === undefined) return { _tag: "Unreadable", detail: "it has no size" }
      return { _tag: "Read", width, height }
    } catch (error) {
      return { _tag: "Unreadable", detail: error instanceof Error ? error.message.split("\n")[0] ?? "" : String(error) }
    }
  }).pipe(Effect.withSpan("kern.media.imageSize", { attributes: { bytes: bytes.length } }))
