// `kern --help` and `kern <command> --help` answered from dist/help.json, which the build renders once with the full
// CLI (src/cli/helpTexts.ts): the texts are fixed by the command definitions, so bin/kern.js need not load the
// command-line framework to print them. Anything but an exact help request is left to the full CLI.
import * as NodeFs from "node:fs"
import { wantsColor } from "../config/wantsColor.js"
import type { HelpText } from "../cli/helpTexts.js"

const helpFlags: ReadonlySet<string> = new Set(["--help", "-h"])

/**
 * The help `kern <argv>` prints, when argv asks for nothing else: no arguments, a command path followed by `--help`
 * or `-h` (and nothing but those flags), or a bare group (`kern kernel`). Undefined for anything else.
 */
export const helpAnswer = (
  argv: ReadonlyArray<string>,
  texts: Readonly<Record<string, HelpText>>,
  color: boolean
): string | undefined => {
  const words = argv.filter((arg) => !helpFlags.has(arg))
  // Another flag (`--json`, `--version`) or an unknown word: the full CLI decides what it means.
  if (words.some((word) => word.startsWith("-"))) return undefined
  let path = ""
  for (const word of words) {
    path = path === "" ? word : `${path} ${word}`
    if (!Object.hasOwn(texts, path)) return undefined
  }
  const text = texts[path]!
  const asked = argv.length === 0 || words.length < argv.length || text.bareGroup
  return asked ? (color ? text.color : text.plain) : undefined
}

/** Prints the help `argv` asks for from the texts file and says so; false when the full CLI must answer. */
export const run = (argv: ReadonlyArray<string>, textsFile: string): boolean => {
  const texts: Record<string, HelpText> = JSON.parse(NodeFs.readFileSync(textsFile, "utf8"))
  const answer = helpAnswer(argv, texts, wantsColor(process.env, process.stdout.isTTY === true))
  if (answer === undefined) return false
  process.stdout.write(answer)
  return true
}
