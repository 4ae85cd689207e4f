// `kern status [dir]` from a bundle of its own (dist/quickStatus.cjs, loaded by bin/kern.js with a V8 code cache): the
// same `run` as the full CLI (src/cli/status.ts), without the command-line framework and every command's definition.
// A command line it does not parse for sure is handed to the full CLI, which explains it.
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { run as status } from "../cli/status.js"
import { runQuick } from "./runQuick.js"
import { statusWords } from "./statusArgs.js"

interface StatusArgs {
  readonly dir: Option.Option<string>
  readonly dirFlag: Option.Option<string>
  readonly json: boolean
  /** `--host` is left to the full CLI. */
  readonly host: false
}

/** The arguments after `status` as the command's, when they are ones this bundle parses for sure. */
export const parseStatusArgs = (argv: ReadonlyArray<string>): StatusArgs | undefined => {
  const words = statusWords(argv)
  return words === undefined
    ? undefined
    : { dir: Option.fromNullable(words.dir), dirFlag: Option.fromNullable(words.dirFlag), json: words.json, host: false }
}

/** Runs `kern <argv>` when it is a status this bundle can parse, and says whether it took it. */
export const run = (argv: ReadonlyArray<string>, full: () => void): boolean => {
  if (argv[0] !== "status") return false
  const args = parseStatusArgs(argv.slice(1))
  if (args === undefined) return false
  runQuick(Effect.as(status(args), 0), full)
  return true
}
