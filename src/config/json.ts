// JSON text from outside (config files, flags, provider bodies, tool-call arguments, HTTP bodies, channel updates,
// session lines), decoded by Schema; shared by every layer above. Every such text goes through `parseJsonBounded`:
// JSON.parse itself nests thousands of levels deep, but the recursive walks after it (Schema, formatting, redaction,
// fingerprints) overflow the stack on arguments a model nested ~3,000 levels deep. So the depth is checked on the
// text first, in one pass without recursion, and a text nested deeper than the limit is refused before any value
// exists for a walk to overflow on.
import { Either, ParseResult, Schema } from "effect"

/**
 * The deepest nesting of arrays and objects kern accepts from outside: far beyond any real tool call, config or
 * update (they stay under ~10), and far below the depth where a recursive walk overflows the stack (thousands).
 */
export const maxJsonDepth = 100

/** Why a JSON text was refused: it is not JSON (`syntax`), or it nests deeper than the limit (`depth`). */
export class JsonTextError extends Schema.TaggedError<JsonTextError>()("JsonTextError", {
  reason: Schema.Literal("syntax", "depth"),
  message: Schema.String
}) {}

/**
 * Whether a text holds more than `max` opening brackets, counted with the native `indexOf`: a text with fewer cannot
 * nest deeper, and this spares nearly every text (a session line, a request) the character-by-character pass.
 */
const moreOpeningsThan = (text: string, max: number): boolean => {
  let count = 0
  // Two loops, not one over the two brackets: an iterator per call was a good part of a cold session load's check.
  for (let at = text.indexOf("{"); at !== -1; at = text.indexOf("{", at + 1)) {
    if (++count > max) return true
  }
  for (let at = text.indexOf("["); at !== -1; at = text.indexOf("[", at + 1)) {
    if (++count > max) return true
  }
  return false
}

const quote = 0x22
const backslash = 0x5c

/**
 * Where a JSON text first nests deeper than `max` arrays and objects, or undefined when it never does. One pass over
 * the characters, skipping strings (a bracket inside a string is text, not nesting); linear, no recursion.
 */
export const jsonDepthExceeded = (text: string, max: number = maxJsonDepth): number | undefined => {
  if (!moreOpeningsThan(text, max)) return undefined
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === quote) {
      // The closing quote is the next one not escaped by an odd run of backslashes.
      let end = text.indexOf("\"", i + 1)
      while (end !== -1) {
        let slashes = 0
        while (text.charCodeAt(end - 1 - slashes) === backslash) slashes++
        if (slashes % 2 === 0) break
        end = text.indexOf("\"", end + 1)
      }
      if (end === -1) return undefined
      i = end
    } else if (code === 0x5b || code === 0x7b) {
      depth++
      if (depth > max) return i
    } else if (code === 0x5d || code === 0x7d) {
      depth--
    }
  }
  return undefined
}

/** The refusal of a text nested deeper than `max`, naming the limit and where it was passed. */
export const tooDeep = (offset: number, max: number = maxJsonDepth): JsonTextError =>
  new JsonTextError({
    reason: "depth",
    message: `nested more than ${max} levels deep (at character ${offset + 1})`
  })

/**
 * JSON text → a value, refusing a text nested deeper than `max` before parsing it. `parse` is the parser to use
 * once the depth is known to be safe (JSON.parse by default; @effect/ai's secure parser for tool-call arguments).
 */
export const parseJsonBounded = (
  text: string,
  options: { readonly max?: number; readonly parse?: (text: string) => unknown } = {}
): Either.Either<unknown, JsonTextError> => {
  const max = options.max ?? maxJsonDepth
  const deep = jsonDepthExceeded(text, max)
  if (deep !== undefined) return Either.left(tooDeep(deep, max))
  const parse = options.parse ?? JSON.parse
  return Either.try({
    try: (): unknown => parse(text),
    catch: (error) => new JsonTextError({ reason: "syntax", message: error instanceof Error ? error.message : String(error) })
  })
}

/** JSON text → a value; a syntax error is the parser's own sentence (`Unexpected end of JSON input`). */
export const parseJsonText = (text: string): Either.Either<unknown, string> =>
  parseJsonBounded(text).pipe(Either.mapLeft((error) => error.message))

/**
 * `Schema.parseJson()` with a depth limit: a string decoded to the value it holds, failing (a ParseError naming the
 * depth or the syntax error) on text nested deeper than `max`.
 */
export const boundedJson = (max: number = maxJsonDepth): Schema.Schema<unknown, string> =>
  Schema.transformOrFail(Schema.String, Schema.Unknown, {
    strict: true,
    decode: (text, _, ast) =>
      Either.mapLeft(parseJsonBounded(text, { max }), (error) => new ParseResult.Type(ast, text, error.message)),
    encode: (value, _, ast) =>
      ParseResult.try({
        try: () => JSON.stringify(value),
        catch: (error) => new ParseResult.Type(ast, value, error instanceof Error ? error.message : String(error))
      })
  })

/**
 * `Schema.parseJson(schema)` with the depth limit: every JSON text from outside is decoded through this. A larger
 * `max` is for a text whose parts are checked one by one after the parse (Telegram's batch of updates).
 */
export const parseJsonWith = <A, I, R>(schema: Schema.Schema<A, I, R>, max: number = maxJsonDepth): Schema.Schema<A, string, R> =>
  Schema.compose(boundedJson(max), schema)

/** The parser's sentence behind a ParseError, without the tree the formatter draws around it. */
export const jsonSyntaxMessage = (error: ParseResult.ParseError): string =>
  (ParseResult.TreeFormatter.formatErrorSync(error).split("\n").at(-1) ?? "").replace(/^[\s\u2514\u2500]+/, "")

/**
 * The path to the first array or object nested deeper than `max` in a value a library already parsed (a provider
 * that parses tool-call arguments itself), or undefined when none is. Iterative, so a value nested 100,000 deep is
 * measured without overflowing the stack that a recursive walk would.
 */
export const jsonValueDepthExceeded = (
  value: unknown,
  max: number = maxJsonDepth
): ReadonlyArray<string | number> | undefined => {
  interface Node {
    readonly value: unknown
    readonly depth: number
    readonly key: string | number | undefined
    readonly parent: Node | undefined
  }
  const pending: Array<Node> = [{ value, depth: 0, key: undefined, parent: undefined }]
  while (pending.length > 0) {
    const node = pending.pop()!
    if (typeof node.value !== "object" || node.value === null) continue
    const depth = node.depth + 1
    if (depth > max) {
      const path: Array<string | number> = []
      for (let at: Node | undefined = node; at?.key !== undefined; at = at.parent) path.unshift(at.key)
      return path
    }
    const entries: Array<readonly [string | number, unknown]> = Array.isArray(node.value)
      ? node.value.map((inner, index) => [index, inner] as const)
      : Object.entries(node.value)
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, inner] = entries[i]!
      if (typeof inner === "object" && inner !== null) pending.push({ value: inner, depth, key, parent: node })
    }
  }
  return undefined
}
