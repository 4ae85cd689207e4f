import { Either, Option, ParseResult, Schema } from "effect"
import { clip } from "./clip.js"
import { didYouMean } from "./didYouMean.js"
import { parseJsonText } from "./json.js"
import { ConfigError } from "./errors.js"
import { mcpServerExpectations, mcpServersExpectation } from "./mcpServers.js"
import { limitsExpectation, unknownLimitKeys } from "./limits.js"
import {
  expectations,
  type KernConfig,
  KernConfigFields,
  KernConfigFile,
  knownBudgetKeys,
  knownKeys,
  Port,
  Provider
} from "./schema.js"

export interface DecodedConfig {
  readonly config: KernConfig
  readonly warnings: ReadonlyArray<string>
}

const describe = (value: unknown): string => {
  if (value === null) return "null"
  if (Array.isArray(value)) return `an array ${clip(JSON.stringify(value), 60)}`
  switch (typeof value) {
    case "string":
      return `the string ${clip(JSON.stringify(value), 60)}`
    case "number":
      return `the number ${value}`
    case "boolean":
      return `${value}`
    case "object":
      return `an object ${clip(JSON.stringify(value), 60)}`
    default:
      return typeof value
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The value at `path` inside parsed JSON (array indexes and object keys); undefined where there is none. */
export const valueAt = (raw: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>((at, key) => (Array.isArray(at) ? at[Number(key)] : isRecord(at) ? at[String(key)] : undefined), raw)

/**
 * The settings whose default is the permissive one (or a spending cap): a misspelling of one would leave the agent
 * less guarded than its owner wrote (`"aprovalMode": "ask"` kept bash auto-approved), so it stops kern instead of
 * being ignored with a warning. The budget's own keys are all caps.
 */
const safetyKeys: ReadonlySet<string> = new Set([
  "approvalMode",
  "safetyMode",
  "toolScope",
  "contractEnforcement",
  "workspaceGuard",
  "budget",
  "limits",
  ...[...knownBudgetKeys].map((key) => `budget.${key}`)
])

/** Unknown keys as warnings (with the key meant, when one is close), or the error for a misspelt safety setting. */
const unknownKeys = (source: string, raw: Record<string, unknown>): Either.Either<Array<string>, ConfigError> => {
  const budget = raw["budget"]
  const unknown = [
    ...Object.keys(raw).filter((key) => !knownKeys.has(key)).map((key) => ({ key, known: knownKeys, prefix: "" })),
    ...(isRecord(budget) ? Object.keys(budget) : [])
      .filter((key) => !knownBudgetKeys.has(key))
      .map((key) => ({ key, known: knownBudgetKeys, prefix: "budget." }))
  ]
  // A spending cap is a safety setting all through: any key under `limits` kern does not know stops it.
  const unknownLimit = unknownLimitKeys(raw["limits"])[0]
  if (unknownLimit !== undefined) {
    const meant = didYouMean(unknownLimit.key, unknownLimit.known)
    return Either.left(new ConfigError({
      source,
      key: `limits.${unknownLimit.key}`,
      ...(meant === undefined ? {} : { didYouMean: `limits.${meant}` }),
      expected: meant === undefined
        ? limitsExpectation
        : "A misspelt spending cap is not ignored: kern does not run this agent until it is fixed.",
      found: "an unknown key"
    }))
  }
  const warnings: Array<string> = []
  for (const { key, known, prefix } of unknown) {
    const meant = didYouMean(key, known)
    if (meant !== undefined && safetyKeys.has(`${prefix}${meant}`)) {
      return Either.left(new ConfigError({
        source,
        key: `${prefix}${key}`,
        didYouMean: `${prefix}${meant}`,
        expected: `A misspelt safety setting is not ignored: kern does not run this agent until it is fixed.`,
        found: "an unknown key"
      }))
    }
    warnings.push(`${source}: unknown key "${prefix}${key}" ignored${meant === undefined ? "" : ` (did you mean "${prefix}${meant}"?)`}`)
  }
  return Either.right(warnings)
}

/** A server's key names what it accepts; a bad server name, the naming rule; a server of no known shape, the shapes. */
const mcpExpectation = (path: ReadonlyArray<PropertyKey>, message: string | undefined, found: unknown): string => {
  if (path.length === 1 && message !== undefined && message.startsWith("a server name")) return message
  const field = String(path[2])
  // Neither `command` nor `url`: the server has no shape kern knows.
  if (found === undefined && (field === "command" || field === "url")) return mcpServersExpectation
  return mcpServerExpectations[field] ?? mcpServersExpectation
}

/**
 * The known keys decoded as KernConfigFile decodes them, key by key: each present key by a parser of its own field
 * alone, each absent one given its default straight from its field (none for a key without one), in the fields'
 * order, stopping at the first error as the whole decode does. A parser of the whole schema walks every setting
 * and its nested shapes (MCP servers, limits, media...) before decoding anything: 7–12 ms of a cold process at
 * every command, when a config.json as `kern init` writes it holds five keys. The defaults are the schema's own
 * constants, which the whole decode checked against their types again.
 */
export const decodeKnown = (known: Record<string, unknown>): Either.Either<KernConfigFile, ParseResult.ParseError> => {
  const decoded: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(KernConfigFields)) {
    const ast = field.ast
    if (Object.hasOwn(known, key)) {
      const one = Schema.decodeUnknownEither(Schema.Struct({ [key]: field }))({ [key]: known[key] }, { onExcessProperty: "ignore" })
      if (Either.isLeft(one)) return Either.left(one.left)
      if (Object.hasOwn(one.right, key)) decoded[key] = (one.right as Record<string, unknown>)[key]
    } else if (ast._tag === "PropertySignatureTransformation") {
      const value = ast.decode(Option.none())
      if (Option.isSome(value)) decoded[key] = value.value
    } else if (!ast.isOptional) {
      // A key the file must have: the whole decode says how it is missing.
      return Schema.decodeUnknownEither(KernConfigFile)(known, { onExcessProperty: "ignore" })
    }
  }
  return Either.right(decoded as KernConfigFile)
}

/**
 * Decodes the parsed contents of `.kern/config.json`. Unknown keys become warnings; the first wrong value becomes
 * a ConfigError naming the key, what it accepts and what was there.
 */
export const decodeConfigFile = (
  source: string,
  raw: unknown,
  folderName: string
): Either.Either<DecodedConfig, ConfigError> => {
  if (!isRecord(raw)) {
    return Either.left(new ConfigError({ source, expected: "a JSON object of settings", found: describe(raw) }))
  }
  const checked = unknownKeys(source, raw)
  if (Either.isLeft(checked)) return Either.left(checked.left)
  const warnings = checked.right
  const known = Object.fromEntries(Object.entries(raw).filter(([key]) => knownKeys.has(key)))
  return decodeKnown(known).pipe(
    Either.mapLeft((error) => {
      const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
      // A server matches one of two shapes: the issue worth naming is about a server's value that is there.
      const issue = issues.find((candidate) => candidate.path.length > 2 && valueAt(known, candidate.path) !== undefined) ??
        issues[0]
      const path = issue?.path ?? []
      const key = path.map(String).join(".")
      const table = expectations as Record<string, string>
      const expected = path[0] === "mcpServers"
        ? mcpExpectation(path, issue?.message, valueAt(known, path))
        : table[key] ?? table[String(path[0])] ?? issue?.message ?? "a valid value"
      return new ConfigError({ source, key, expected, found: describe(valueAt(known, path)) })
    }),
    Either.map((file) => ({ config: { ...file, name: file.name ?? folderName }, warnings }))
  )
}

/** Deeper than any real config; deeper input would overflow the stack of the recursive steps that follow. */
const maxJsonDepth = 64

/** How deeply `text` nests arrays and objects (brackets inside strings do not count), stopping past `limit`. */
const jsonDepth = (text: string, limit: number): number => {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length && deepest <= limit; i++) {
    const char = text[i]
    if (inString) {
      if (char === "\\") i++
      else if (char === "\"") inString = false
    } else if (char === "\"") inString = true
    else if (char === "{" || char === "[") deepest = Math.max(deepest, ++depth)
    else if (char === "}" || char === "]") depth--
  }
  return deepest
}



/** The text of `.kern/config.json` as JSON: a syntax error or absurd nesting is a ConfigError, never a crash. */
export const parseConfigJson = (source: string, text: string): Either.Either<unknown, ConfigError> => {
  if (jsonDepth(text, maxJsonDepth) > maxJsonDepth) {
    return Either.left(
      new ConfigError({ source, expected: `JSON nested at most ${maxJsonDepth} levels deep`, found: "deeper nesting" })
    )
  }
  return parseJsonText(text).pipe(
    Either.mapLeft((syntax) => new ConfigError({ source, expected: "valid JSON", found: `a syntax error (${syntax})` }))
  )
}

const decodePort = Schema.decodeUnknownEither(Schema.compose(Schema.NumberFromString, Port))
const decodeProvider = Schema.decodeUnknownEither(Provider)

/** Applies KERN_NAME, KERN_MODEL, KERN_PROVIDER and KERN_PORT on top of a decoded config, returning a new value. */
export const applyEnvOverrides = (
  config: KernConfig,
  env: Readonly<Record<string, string | undefined>>
): Either.Either<KernConfig, ConfigError> => {
  const present = (key: string): string | undefined => {
    const value = env[key]?.trim()
    return value === undefined || value === "" ? undefined : value
  }
  const name = present("KERN_NAME")
  const model = present("KERN_MODEL")
  const provider = present("KERN_PROVIDER")
  const port = present("KERN_PORT")
  let next: KernConfig = {
    ...config,
    ...(name === undefined ? {} : { name }),
    ...(model === undefined ? {} : { model })
  }
  if (provider !== undefined) {
    const decoded = decodeProvider(provider)
    if (Either.isLeft(decoded)) {
      return Either.left(
        new ConfigError({
          source: "environment",
          key: "KERN_PROVIDER",
          expected: expectations.provider,
          found: describe(provider)
        })
      )
    }
    next = { ...next, provider: decoded.right }
  }
  if (port !== undefined) {
    const decoded = decodePort(port)
    if (Either.isLeft(decoded)) {
      return Either.left(
        new ConfigError({ source: "environment", key: "KERN_PORT", expected: expectations.port, found: describe(port) })
      )
    }
    next = { ...next, port: decoded.right }
  }
  return Either.right(next)
}
