import type { KnownSecret } from "../config/KnownSecrets.js"
import type { SafetyClass, ToolSpec } from "./contracts.js"

/**
 * Defence in depth for the secrets kern knows: a model that learned a key (from a file, a log, a tool's output)
 * must not be able to ship it out through a tool that reaches the network or runs commands, and tool results
 * never carry one to the model or the session. Plain values only: encodings (base64, split strings) are out of scope.
 */

/** Tools whose arguments can carry a value off the machine. */
const guardedClasses: ReadonlySet<SafetyClass> = new Set(["NETWORK", "DESTRUCTIVE"])

/** JSON-shaped values nest far less; the bound keeps a pathological value from recursing without end. */
const maxDepth = 64

const secretIn = (text: string, secrets: ReadonlyArray<KnownSecret>): KnownSecret | undefined =>
  secrets.find((secret) => text.includes(secret.value))

/** The first known secret whose value appears anywhere in `value`: in a string, an object key, at any depth. */
export const carriedSecret = (
  value: unknown,
  secrets: ReadonlyArray<KnownSecret>,
  depth = 0
): KnownSecret | undefined => {
  if (secrets.length === 0 || depth > maxDepth) return undefined
  if (typeof value === "string") return secretIn(value, secrets)
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = carriedSecret(item, secrets, depth + 1)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (typeof value === "object" && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      const found = secretIn(key, secrets) ?? carriedSecret(inner, secrets, depth + 1)
      if (found !== undefined) return found
    }
  }
  return undefined
}

/** Why a call must not run, when a NETWORK or DESTRUCTIVE tool's arguments carry a secret; the value is never named. */
export const secretRefusal = (
  spec: Pick<ToolSpec, "toolId" | "safetyClass">,
  args: unknown,
  secrets: ReadonlyArray<KnownSecret>
): string | undefined => {
  if (!guardedClasses.has(spec.safetyClass)) return undefined
  const found = carriedSecret(args, secrets)
  return found === undefined
    ? undefined
    : `the arguments of ${spec.toolId} (${spec.safetyClass}) contain the value of ${found.name}, a secret kern holds; ` +
      "it may not be sent out or handed to a command"
}

/** The marker a secret is replaced with: the model learns which secret was there, never its value. */
export const redactionMarker = (name: string): string => `[redacted:${name}]`

/** `text` with every known secret replaced by `[redacted:NAME]`. */
export const redactSecretsInText = (text: string, secrets: ReadonlyArray<KnownSecret>): string => {
  let out = text
  for (const secret of secrets) if (out.includes(secret.value)) out = out.split(secret.value).join(redactionMarker(secret.name))
  return out
}

/** `value` with every known secret replaced by `[redacted:NAME]`; the same reference when there was none. */
export const redactSecrets = (value: unknown, secrets: ReadonlyArray<KnownSecret>, depth = 0): unknown => {
  if (secrets.length === 0 || depth > maxDepth) return value
  if (typeof value === "string") return redactSecretsInText(value, secrets)
  if (Array.isArray(value)) {
    const items = value.map((item) => redactSecrets(item, secrets, depth + 1))
    return items.every((item, index) => item === value[index]) ? value : items
  }
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value)
    const redacted = entries.map(([key, inner]) => [redactSecretsInText(key, secrets), redactSecrets(inner, secrets, depth + 1)] as const)
    return redacted.every(([key, inner], index) => key === entries[index]?.[0] && inner === entries[index]?.[1])
      ? value
      : Object.fromEntries(redacted)
  }
  return value
}
