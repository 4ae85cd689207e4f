/**
 * Config shown by shape, for the kern tool. Secret values themselves are replaced by the one redactor
 * (KnownSecrets and src/kernel/secretGuard.ts) at the executor's door, as in every other tool's result.
 */
import { isSecretKey } from "../config/secretNames.js"

export const redacted = "****"

/** A copy of `value` with every field whose key looks secret (`apiKey`, `env.GITHUB_TOKEN`) replaced by `****`. */
export const maskSecretFields = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(maskSecretFields)
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [
        key,
        isSecretKey(key) && inner !== undefined && inner !== null && inner !== false ? redacted : maskSecretFields(inner)
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
