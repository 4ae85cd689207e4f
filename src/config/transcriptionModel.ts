import { Schema } from "effect"

/**
 * `transcriptionModel`: the model voice notes and audio files are transcribed with, through the provider's
 * OpenAI-compatible `POST {baseURL}/audio/transcriptions` (with the agent's key), e.g. `whisper-1` (OpenAI),
 * `gpt-4o-mini-transcribe`, or what a local server (vLLM, LocalAI) serves. Unset: audio is stored with the message
 * and the model is told it was not transcribed, and how to turn transcription on.
 */
export const TranscriptionModel = Schema.String.pipe(Schema.trimmed(), Schema.minLength(1)).annotations({
  identifier: "a non-empty string (a model id)"
})

export const transcriptionModelExpectation =
  "a non-empty string (the model id voice notes are transcribed with at the provider's /audio/transcriptions, e.g. whisper-1)"
