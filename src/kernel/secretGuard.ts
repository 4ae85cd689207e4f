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

/**
 * `value` with every known secret replaced by `[redacted:NAME]`; the same reference when there was none. The shape
 * stays: a string stays a string, an array an array, an object an object (a key holding a secret is renamed).
 */
export const redactSecrets = <A>(value: A, secrets: ReadonlyArray<KnownSecret>): A => redactUnknown(value, secrets, 0) as A

const redactUnknown = (value: unknown, secrets: ReadonlyArray<KnownSecret>, depth: number): unknown =>
  secrets.length === 0 ? value : mapStrings(value, (text) => redactSecretsInText(text, secrets), depth)

/**
 * `value` with `f` applied to every string in it, keys included; the same reference when `f` changed none. The
 * shape stays: a string stays a string, an array an array, an object an object.
 */
export const mapStrings = (value: unknown, f: (text: string) => string, depth = 0): unknown => {
  if (depth > maxDepth) return value
  if (typeof value === "string") return f(value)
  if (Array.isArray(value)) {
    const items = value.map((item) => mapStrings(item, f, depth + 1))
    return items.every((item, index) => item === value[index]) ? value : items
  }
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value)
    const mapped = entries.map(([key, inner]) => [f(key), mapStrings(inner, f, depth + 1)] as const)
    return mapped.every(([key, inner], index) => key === entries[index]?.[0] && inner === entries[index]?.[1])
      ? value
      : Object.fromEntries(mapped)
  }
  return value
}

/** A secret as it appears inside JSON text: the escaped form of the value, without its quotes. */
export const jsonForm = (value: string): string => JSON.stringify(value).slice(1, -1)

/**
 * JSON text with every known secret replaced in its strings and keys; the same text when none is there. The text is
 * parsed only when a secret's escaped form occurs in it, so the common case is a substring search.
 */
export const redactSecretsInJson = (json: string, secrets: ReadonlyArray<KnownSecret>): string => {
  if (!secrets.some((secret) => json.includes(jsonForm(secret.value)))) return json
  let parsed: unknown
  try {
    parsed = JSON.parse(json)
  } catch {
    // Not JSON after all (a text body): the plain form is what is there.
    return redactSecretsInText(json, secrets)
  }
  return JSON.stringify(redactSecrets(parsed, secrets))
}

/** Redacts text that arrives in pieces (a streamed reply): a secret split across pieces is still caught. */
export interface StreamRedactor {
  /** The part of the text so far that can be shown: what could still begin a secret is held back. */
  readonly push: (piece: string) => string
  /** The rest, at the end of the stream. */
  readonly flush: () => string
}

/**
 * A redactor for one stream. After each piece it holds back the longest tail that is the start of some secret, so a
 * secret arriving over several pieces is replaced whole and no prefix of one is ever shown. Local to one stream.
 */
export const makeStreamRedactor = (secrets: ReadonlyArray<KnownSecret>): StreamRedactor => {
  let pending = ""
  const heldTail = (text: string): number => {
    let held = 0
    for (const { value } of secrets) {
      const longest = Math.min(value.length - 1, text.length)
      for (let n = longest; n > held; n--) {
        if (text.endsWith(value.slice(0, n))) {
          held = n
          break
        }
      }
    }
    return held
  }
  return {
    push: (piece) => {
      if (secrets.length === 0) return piece
      const text = redactSecretsInText(pending + piece, secrets)
      const held = heldTail(text)
      pending = text.slice(text.length - held)
      return text.slice(0, text.length - held)
    },
    flush: () => {
      const rest = pending
      pending = ""
      return rest
    }
  }
}
