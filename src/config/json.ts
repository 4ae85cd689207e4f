// JSON text from outside (config files, flags, provider bodies), decoded by Schema; shared by every layer above.
import { Either, ParseResult, Schema } from "effect"

const decodeJsonText = Schema.decodeUnknownEither(Schema.parseJson())

/** JSON text → a value; a syntax error is the parser's own sentence (`Unexpected end of JSON input`). */
export const parseJsonText = (text: string): Either.Either<unknown, string> =>
  decodeJsonText(text).pipe(Either.mapLeft(jsonSyntaxMessage))

/** The parser's sentence behind a ParseError, without the tree the formatter draws around it. */
export const jsonSyntaxMessage = (error: ParseResult.ParseError): string =>
  (ParseResult.TreeFormatter.formatErrorSync(error).split("\n").at(-1) ?? "").replace(/^[\s└─]+/, "")
