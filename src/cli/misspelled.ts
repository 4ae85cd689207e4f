import type * as Usage from "@effect/cli/Usage"
import * as Option from "effect/Option"
import { didYouMean } from "../config/didYouMean.js"
import type { CommandDoc } from "./help.js"

// @effect/cli names an unknown subcommand by listing kern's top-level commands (even for `kern sessions lst`), and
// suggests a flag only for some typos. Every command line is read here first, against the same documentation help
// shows, so an unknown word of any command gets one message naming it and, when one is close, what was meant.

interface Flag {
  readonly names: ReadonlyArray<string>
  readonly takesValue: boolean
  /** The words a choice flag takes (`--level debug|info|warn|error`). */
  readonly choices?: ReadonlyArray<string>
}

/** What @effect/cli adds to every command; `--wizard` is refused in program.ts with its own message. */
const builtIns: ReadonlyArray<Flag> = [
  { names: ["-h", "--help"], takesValue: false },
  { names: ["--version"], takesValue: false },
  { names: ["--wizard"], takesValue: false },
  { names: ["--log-level"], takesValue: true },
  { names: ["--completions"], takesValue: true }
]

/** The flags a command's usage declares (`--level`, `-n`/`--lines`), and whether each takes a value. */
const flagsOf = (usage: Usage.Usage): Array<Flag> => {
  switch (usage._tag) {
    case "Named":
      return usage.names.some((name) => name.startsWith("-"))
        ? [{
          names: usage.names,
          takesValue: Option.isSome(usage.acceptedValues),
          ...Option.match(usage.acceptedValues, {
            onNone: () => ({}),
            onSome: (values) => (values.includes(" | ") ? { choices: values.split(" | ") } : {})
          })
        }]
        : []
    case "Optional":
    case "Repeated":
      return flagsOf(usage.usage)
    case "Alternation":
    case "Concat":
      return [...flagsOf(usage.left), ...flagsOf(usage.right)]
    default:
      return []
  }
}

const childrenOf = (path: string, docs: Readonly<Record<string, CommandDoc>>): Array<string> =>
  Object.keys(docs)
    .filter((other) => other !== path && other.startsWith(path === "" ? "" : `${path} `))
    .map((other) => other.slice(path === "" ? 0 : path.length + 1))
    .filter((rest) => !rest.includes(" "))

const named = (path: string, word: string) => (path === "" ? word : `${path} ${word}`)

/**
 * The first unknown command or flag of `argv` (the arguments after `kern`) for the command `path` it names, as the
 * line to print; none when every word is known (the parser then checks values and arguments).
 */
export const misspelled = (
  argv: ReadonlyArray<string>,
  path: string,
  docs: Readonly<Record<string, CommandDoc>>
): string | undefined => {
  const doc = docs[path]
  const children = childrenOf(path, docs)
  const flags = doc === undefined || children.length > 0 && doc.runsAlone !== true ? [] : flagsOf(doc.usage())
  const known: ReadonlyArray<Flag> = [...builtIns, ...flags]
  const depth = path === "" ? 0 : path.split(" ").length
  const command = path === "" ? "kern" : `kern ${path}`
  let positionals = 0
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--") break
    if (arg.startsWith("-") && arg !== "-") {
      const name = arg.includes("=") ? arg.slice(0, arg.indexOf("=")) : arg
      const flag = known.find((candidate) => candidate.names.includes(name))
      if (flag === undefined) {
        // A group has no flags of its own but the built-in ones (`kern --verison`).
        const guess = didYouMean(name, known.flatMap((candidate) => candidate.names.filter((n) => n.startsWith("--"))))
        return guess === undefined
          ? `unknown option '${name}' for ${command}${flags.length === 0 ? "" : ` (a folder whose name starts with '-' can be given as ./${arg})`}`
          : `unknown option '${name}' for ${command}: did you mean ${guess}?`
      }
      const value = !flag.takesValue ? undefined : arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : argv[++i]
      const choices = flag.choices
      if (value !== undefined && choices !== undefined && !choices.includes(value)) {
        const guess = didYouMean(value, choices)
        return `${name} must be one of ${choices.join(", ")}, not "${value}"${guess === undefined ? "" : `: did you mean ${guess}?`}`
      }
      continue
    }
    positionals++
    // The words that name the command are known; the first word after them is a command only where one is expected.
    if (positionals !== depth + 1 || children.length === 0) continue
    if (doc?.runsAlone === true) {
      // `kern users [dir]`: a word there is a folder unless it is a near miss of a subcommand.
      const guess = didYouMean(arg, children)
      if (guess !== undefined) return `unknown command 'kern ${named(path, arg)}': did you mean 'kern ${named(path, guess)}'?`
      continue
    }
    const guess = didYouMean(arg, children)
    return `unknown command 'kern ${named(path, arg)}'${guess === undefined ? "" : `: did you mean 'kern ${named(path, guess)}'?`}`
  }
  return undefined
}
