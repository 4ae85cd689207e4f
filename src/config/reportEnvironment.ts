// The part of its environment `kern status` sends a running agent to make the report with (POST /status/report,
// src/quick/statusAsk.ts): the variables the report can read, never the rest. The report reads the environment only
// through the config (src/config/AgentConfig.ts loadConfig): KERN_* (the overrides, the token), the provider's key
// and base URL, the chat channels' tokens, and the variables config.json names (`apiKeyEnv`, `${NAME}` references).
// Plain code without Effect or Schema: the status client that sends it is a bundle of a few plain files.
// test/config/reportEnvironment.test.ts checks that these names cover what providers.ts, ModelSettings.ts and
// tools/Channels.ts read.

/** The variables the report reads whatever config.json says: provider keys and base URLs, chat channel tokens. */
export const reportVariables: ReadonlySet<string> = new Set([
  "OPENROUTER_API_KEY",
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "OPENAI_BASE_URL",
  "OLLAMA_BASE_URL",
  "TELEGRAM_BOT_TOKEN",
  "SLACK_BOT_TOKEN",
  "SLACK_APP_TOKEN"
])

/** A word config.json's text holds that may name a variable (`"${GITHUB_TOKEN}"` inside a longer string). */
const word = /[A-Za-z_][A-Za-z0-9_]*/g

/** Every string config.json holds, whole (`"apiKeyEnv": "MY-KEY"` names a variable no word spells), at any depth. */
const stringsOf = (value: unknown, into: Set<string>): Set<string> => {
  if (typeof value === "string") into.add(value)
  else if (typeof value === "object" && value !== null) for (const inner of Object.values(value)) stringsOf(inner, into)
  return into
}

/** The names config.json's text may give a variable: its words, and its strings whole when it parses. */
const namesIn = (configText: string): Set<string> => {
  const names = new Set(configText.match(word) ?? [])
  try {
    stringsOf(JSON.parse(configText), names)
  } catch {
    // Not JSON: the report says so from the text alone, whatever the environment.
  }
  return names
}

/**
 * The variables of `env` the report may read: KERN_*, `reportVariables`, and those config.json's text (`configText`,
 * as it is on disk, or none) names, as a word or a whole string. Anything else in the environment is left out.
 */
export const reportEnvironment = (
  env: Readonly<Record<string, string | undefined>>,
  configText: string | undefined
): Record<string, string> => {
  const named = configText === undefined ? new Set<string>() : namesIn(configText)
  const sent: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && (name.startsWith("KERN_") || reportVariables.has(name) || named.has(name))) sent[name] = value
  }
  return sent
}
