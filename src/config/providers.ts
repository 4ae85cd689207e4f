import { isHttpUrl, type KernConfig, type Provider } from "./schema.js"

/** The environment variable that holds a provider's API key, unless `apiKeyEnv` names another. */
const defaultKeyEnv: Record<Provider, string | undefined> = {
  openrouter: "OPENROUTER_API_KEY",
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
  ollama: undefined,
  "openai-compatible": "OPENAI_API_KEY"
}

export const apiKeyEnvFor = (config: Pick<KernConfig, "provider" | "apiKeyEnv">): string | undefined =>
  config.apiKeyEnv ?? defaultKeyEnv[config.provider]

/** The environment variable a provider takes its base URL from when config.json sets none. */
export const baseURLEnvFor = (provider: Provider): string | undefined =>
  provider === "ollama" ? "OLLAMA_BASE_URL" : provider === "openai" || provider === "openai-compatible"
  ? "OPENAI_BASE_URL"
  : undefined

/** A base URL given in the environment that cannot be one, as a problem line. */
export const baseURLEnvProblem = (
  config: Pick<KernConfig, "provider" | "baseURL">,
  env: Readonly<Record<string, string>>
): string | undefined => {
  const name = config.baseURL === undefined ? baseURLEnvFor(config.provider) : undefined
  const value = name === undefined ? "" : (env[name] ?? "").trim()
  return name === undefined || value === "" || isHttpUrl(value)
    ? undefined
    : `${name} is not an http(s) URL (found ${JSON.stringify(value)}); use one such as http://localhost:8000/v1`
}

/** Configuration that keeps the agent from talking to its model, as short lines for `kern status`. */
export const providerProblems = (
  config: Pick<KernConfig, "provider" | "apiKeyEnv" | "model" | "baseURL">,
  env: Readonly<Record<string, string>>
): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (config.model === undefined) problems.push("no model: set \"model\" in .kern/config.json or KERN_MODEL")
  const keyEnv = apiKeyEnvFor(config)
  if (keyEnv !== undefined && (env[keyEnv] ?? "") === "") {
    problems.push(`no API key: set ${keyEnv} in .kern/.env or the environment (or name another variable with "apiKeyEnv")`)
  }
  if (config.provider === "openai-compatible" && config.baseURL === undefined && (env["OPENAI_BASE_URL"] ?? "") === "") {
    problems.push("no base URL: provider \"openai-compatible\" needs \"baseURL\" in .kern/config.json or OPENAI_BASE_URL")
  }
  const badURL = baseURLEnvProblem(config, env)
  if (badURL !== undefined) problems.push(badURL)
  return problems
}
