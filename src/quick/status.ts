// `kern status [dir]` from a bundle of its own (dist/quickStatus.cjs, loaded by bin/kern.js with a V8 code cache): the
// same report as the full CLI (src/cli/status.ts), without the command-line framework and every command's definition.
// A command line it does not parse for sure is handed to the full CLI, which explains it. A stopped agent's report is
// kept for the next ask while nothing it shows changes (src/quick/statusCache.ts; src/quick/statusAsk.ts prints it).
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { print, report } from "../cli/status.js"
import { runQuick } from "./runQuick.js"
import { statusWords } from "./statusArgs.js"
import { askKey, keepOutput, type StatusAsk } from "./statusCache.js"

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

/**
 * The command: the report, kept under the key of the ask when the folder was the same before and after it was made,
 * then printed.
 */
const status = (args: StatusArgs) =>
  Effect.gen(function*() {
    // Two folders is the report's usage mistake: no key for it.
    const dir = Option.isSome(args.dir) && Option.isSome(args.dirFlag) && args.dir.value !== args.dirFlag.value
      ? undefined
      : Option.getOrElse(Option.orElse(args.dir, () => args.dirFlag), () => ".")
    // The bundle that makes the report names the build in the key; run from the sources, nothing is kept.
    const ask: StatusAsk | undefined = dir === undefined || typeof __filename !== "string"
      ? undefined
      : { dir, json: args.json, env: process.env, bundle: __filename }
    const before = ask === undefined ? undefined : askKey(ask)
    const output = yield* report(args)
    if (ask !== undefined) keepOutput(ask.dir, before, askKey(ask), output)
    return yield* print(output)
  })

/** Runs `kern <argv>` when it is a status this bundle can parse, and says whether it took it. */
export const run = (argv: ReadonlyArray<string>, full: () => void): boolean => {
  if (argv[0] !== "status") return false
  const args = parseStatusArgs(argv.slice(1))
  if (args === undefined) return false
  runQuick(Effect.as(status(args), 0), full)
  return true
}
