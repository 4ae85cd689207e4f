import type { Vision } from "../config/vision.js"

/**
 * Which known models take images, by name (lower case, without a router prefix such as `openai/` or `anthropic/`,
 * without an Ollama tag's size such as `:13b`). The first pattern that matches decides; a model no pattern matches
 * is treated as not seeing, so it gets a note naming the file, never an image the endpoint would refuse. Config
 * `vision` overrides the table (src/config/vision.ts).
 */
export const visionTable: ReadonlyArray<readonly [pattern: RegExp, sees: boolean]> = [
  // OpenAI: the small reasoning models of the o-series and the text-only GPT-4/3.5 do not take images.
  [/^(o1-mini|o3-mini|gpt-3\.5|gpt-4-0613|gpt-4-0314|gpt-4$|gpt-4-32k|gpt-4o-audio|gpt-4o-realtime|gpt-4o-search)/, false],
  [/^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-4-turbo|gpt-4-vision|gpt-5|o1|o3|o4-mini|computer-use)/, true],
  // Anthropic: every Claude from 3 on (3, 3.5, 3.7, 4, 4.x; names with dots as routers spell them, or dashes).
  [/^claude-(instant|2)/, false],
  [/^claude-[3-9]/, true],
  [/^claude-(opus|sonnet|haiku)-[4-9]/, true],
  // Google: Gemini 1.5 on (the 1.0 text model was `gemini-pro`); Gemma 3 from 4B up.
  [/^(gemini-pro|gemini-1\.0-pro)$/, false],
  [/^gemini/, true],
  [/^gemma-?3(n)?[-:]?(4|12|27)b/, true],
  // Open-weight vision models as Ollama, vLLM, LM Studio and OpenRouter name them.
  [/^(llama-?3\.2-?(11|90)b-vision|llama3\.2-vision|llama-?4|llava|bakllava|moondream|minicpm-v|pixtral|qwen2?(\.5)?-?vl|qwen-vl|qwen3-vl|internvl|mistral-small-3\.[12]|grok-(2-)?vision|grok-4|llama-guard-3-11b-vision|phi-?3\.5-vision|phi-?4-multimodal|granite3\.2-vision|nova-(lite|pro))/, true]
]

/** A model's name as the table reads it: lower case, no router prefix, no size tag. */
export const modelKey = (model: string): string => {
  const lower = model.trim().toLowerCase()
  const name = lower.slice(lower.lastIndexOf("/") + 1)
  // `llava:13b`, `qwen2.5vl:7b`: Ollama's tag after the colon names a size or quantization, not another model.
  return name.replace(/:(latest|[0-9.]+b.*|q[0-9].*|fp16|free|beta|extended|online|thinking)$/, "")
}

/** Whether the known-models table says the model takes images. */
export const seesByTable = (model: string): boolean => {
  const key = modelKey(model)
  for (const [pattern, sees] of visionTable) if (pattern.test(key)) return sees
  return false
}

/**
 * Whether `model` is sent images: config `vision` when set (`true`, `false`, or the models named, with or without a
 * router prefix), else the known-models table.
 */
export const modelSees = (vision: Vision | undefined, model: string): boolean => {
  if (vision === undefined) return seesByTable(model)
  if (typeof vision === "boolean") return vision
  const wanted = model.trim().toLowerCase()
  const short = wanted.slice(wanted.lastIndexOf("/") + 1)
  return vision.some((name) => {
    const listed = name.trim().toLowerCase()
    return listed === wanted || listed === short || listed.slice(listed.lastIndexOf("/") + 1) === wanted
  })
}
