import { Context, Effect, Layer, Schema } from "effect"

/** A voice note or audio file that was not transcribed: the provider refused, failed, timed out or is not set up. */
export class TranscriptionFailed extends Schema.TaggedError<TranscriptionFailed>()("TranscriptionFailed", {
  reason: Schema.Literal("off", "failed"),
  message: Schema.String
}) {}

/** Audio to transcribe: its sender's name, its bytes and its sniffed media type. */
export interface AudioFile {
  readonly name: string
  readonly bytes: Uint8Array
  readonly mediaType: string
}

export interface TranscriberShape {
  /** The transcript of the audio; fails with a message a person can act on (it becomes the attachment's note). */
  readonly transcribe: (audio: AudioFile) => Effect.Effect<string, TranscriptionFailed>
}

/**
 * Turns voice notes and audio files into text: the provider's `/audio/transcriptions` (src/model/Transcription.ts), or
 * off with the reason. MediaStore asks it when a message brings audio.
 */
export class Transcriber extends Context.Tag("kern/media/Transcriber")<Transcriber, TranscriberShape>() {}

/** No transcription: every audio file keeps `reason` as its note. */
export const layerOff = (reason: string): Layer.Layer<Transcriber> =>
  Layer.succeed(Transcriber, { transcribe: () => Effect.fail(new TranscriptionFailed({ reason: "off", message: reason })) })
