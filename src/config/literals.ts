// Plain value lists shared by the config Schema and the command-line definition (which must stay light to load).
export const providers = ["openrouter", "openai", "ollama", "openai-compatible", "anthropic"] as const
export type Provider = (typeof providers)[number]
