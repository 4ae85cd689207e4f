import { Data, Effect } from "effect"
import { fittedSize, type ImageBox } from "./imageLimits.js"
import { maxImagePixels } from "./imageSize.js"

export interface FittedImage {
  readonly data: Uint8Array
  readonly mediaType: "image/jpeg" | "image/png"
  readonly width: number
  readonly height: number
}

export class ImageUnreadable extends Data.TaggedError("ImageUnreadable")<{ readonly message: string }> {}

/** JPEG quality of a re-encoded photo: indistinguishable to a model, a fifth of a PNG's bytes. */
const jpegQuality = 85

/**
 * An image as a provider takes it: turned upright (EXIF orientation), scaled down into the box, and encoded again
 * (PNG when it has transparency, else JPEG), so its metadata (a phone photo's GPS position) never leaves, and every
 * input format sharp reads (HEIC, TIFF, AVIF, BMP, …) reaches the model in one it takes. A file sharp cannot decode
 * (truncated, not an image, over `maxImagePixels`) fails with ImageUnreadable saying why.
 */
export const fitImage = (bytes: Uint8Array, box: ImageBox): Effect.Effect<FittedImage, ImageUnreadable> =>
  Effect.tryPromise({
    try: async () => {
      // Loaded on first use: sharp's native module takes ~1 s to load, which a turn without images never pays.
      const sharp = (await import("sharp")).default
      const input = sharp(bytes, { limitInputPixels: maxImagePixels, failOn: "error" })
      const meta = await input.metadata()
      if (meta.width === undefined || meta.height === undefined) throw new Error("it has no size")
      const turned = (meta.orientation ?? 1) >= 5
      const width = turned ? meta.height : meta.width
      const height = turned ? meta.width : meta.height
      const size = fittedSize(box, width, height)
      const pipeline = input.rotate().resize({ width: size.width, height: size.height, fit: "fill" })
      const png = meta.hasAlpha === true
      const data = png
        ? await pipeline.png().toBuffer()
        : await pipeline.flatten({ background: "#ffffff" }).jpeg({ quality: jpegQuality }).toBuffer()
      return { data: new Uint8Array(data), mediaType: png ? "image/png" : "image/jpeg", ...size } satisfies FittedImage
    },
    catch: (error) => new ImageUnreadable({ message: error instanceof Error ? error.message : String(error) })
  }).pipe(Effect.withSpan("kern.media.fitImage", { attributes: { box } }))

