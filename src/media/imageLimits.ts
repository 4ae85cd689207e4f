/** The wire protocol a model speaks (src/model/ModelSettings.ts ModelWire, which model/ keeps; media stays below it). */
export type ModelWire = "responses" | "chat" | "anthropic"

/**
 * The image sizes providers take without scaling them down themselves (larger images cost upload time and, at
 * Anthropic, are refused past 8000 px or 5 MB):
 * - Anthropic: the long edge at most 1568 px and at most ~1.15 megapixels (docs.anthropic.com, "Vision": larger
 *   images are scaled down first, so sending more only adds latency).
 * - OpenAI (Responses, and Chat Completions at openai.com): fitted into a 2048 px square, then the short side at most
 *   768 px (the "high" detail pipeline; its tokens are counted from that size).
 * - Chat Completions anywhere else (OpenRouter, Ollama, vLLM, …): the model behind it is not known, so both.
 */
export const anthropicLongEdge = 1568
export const anthropicMaxPixels = 1_150_000
export const openAiBox = 2048
export const openAiShortSide = 768

/** Whose limits an image is fitted to. */
export type ImageBox = "anthropic" | "openai" | "both"

/** The box a wire's images are fitted to. */
export const boxOf = (wire: ModelWire, provider: string): ImageBox =>
  wire === "anthropic" ? "anthropic" : wire === "responses" || provider === "openai" ? "openai" : "both"

/** The wire a config's model speaks, as src/model/ModelSettings.ts resolves it (a config it refuses never gets here). */
export const wireOfConfig = (config: { readonly provider: string; readonly api?: "responses" | "chat" | undefined }): ModelWire =>
  config.provider === "anthropic"
    ? config.api === "chat" ? "chat" : "anthropic"
    : config.provider === "openai"
    ? config.api === "chat" ? "chat" : "responses"
    : config.api === "responses" ? "responses" : "chat"

/** The scale (≤ 1) that fits `width`×`height` into the box. */
export const scaleFor = (box: ImageBox, width: number, height: number): number => {
  const anthropic = Math.min(1, anthropicLongEdge / Math.max(width, height), Math.sqrt(anthropicMaxPixels / (width * height)))
  const inSquare = Math.min(1, openAiBox / Math.max(width, height))
  const openai = inSquare * Math.min(1, openAiShortSide / (Math.min(width, height) * inSquare))
  return box === "anthropic" ? anthropic : box === "openai" ? openai : Math.min(anthropic, openai)
}

/** The size an image is sent at in the box. */
export const fittedSize = (box: ImageBox, width: number, height: number): { readonly width: number; readonly height: number } => {
  const scale = scaleFor(box, width, height)
  return { width: Math.max(1, Math.floor(width * scale)), height: Math.max(1, Math.floor(height * scale)) }
}
