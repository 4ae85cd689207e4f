/** Keeping secrets out of what the agent (and through it, anyone it talks to) can read. */

export const redacted = "****"

const secretWords: ReadonlySet<string> = new Set([
  "key",
  "apikey",
  "token",
  "secret",
  "password",
  "passwd",
  "pwd",
  "credential",
  "credentials",
  "passphrase"
])

/** `apiKey`, `auth_token`, `SLACK_BOT_TOKEN`, `dbPassword`: the last word names a secret (`maxPromptTokens` does not). */
export const isSecretKey = (key: string): boolean => {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== "")
  const last = words[words.length - 1]?.toLowerCase()
  return last !== undefined && secretWords.has(last)
}

/** Values too short to hide inside other text are not searched for (they would blank out ordinary words). */
const minSecretLength = 4

/** Replaces every occurrence of a secret value inside a string. */
export const scrubText = (text: string, secrets: ReadonlyArray<string>): string =>
  secrets.reduce((out, secret) => (secret.length >= minSecretLength ? out.split(secret).join(redacted) : out), text)

/**
 * A copy of `value` with every field whose key looks secret replaced by `****`, and every occurrence of a known
 * secret value (the `.env` values) scrubbed from the strings that remain.
 */
export const redact = (value: unknown, secrets: ReadonlyArray<string>): unknown => {
  if (typeof value === "string") return scrubText(value, secrets)
  if (Array.isArray(value)) return value.map((item) => redact(item, secrets))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [
        key,
        isSecretKey(key) && inner !== undefined && inner !== null && inner !== false ? redacted : redact(inner, secrets)
      ])
    )
  }
  return value
}

/** A value shown by shape only: `sk-…abcd` for a long key with a prefix, `…abcd` for a long one, `****` otherwise. */
export const maskValue = (value: string): string => {
  if (value.length < 16) return redacted
  // A short vendor prefix (`sk-`, `pk_`) says which kind of key it is; a longer one may be part of the secret.
  const prefix = /^[A-Za-z]{2,3}[-_]/.exec(value)?.[0] ?? ""
  return `${prefix}…${value.slice(-4)}`
}
