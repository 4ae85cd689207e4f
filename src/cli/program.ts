import * as Command from "@effect/cli/Command"
import * as CliConfig from "@effect/cli/CliConfig"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Usage from "@effect/cli/Usage"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import pkg from "../../package.json" with { type: "json" }
import { commandDocs, commands } from "./commands.js"
import { withForegroundLogging } from "./foregroundLogger.js"
import { failureReport } from "./errors.js"
import { commandPath, renderHelp } from "./help.js"
import { misspelled } from "./misspelled.js"

const cli = Command.run(commands, {
  name: "kern",
  version: `v${pkg.version}`,
  executable: "kern"
})

/** The command a command line names (`kernel exec`, "" for none), and whether it asks for help rather than a run. */
export const commandLineOf = (argv: ReadonlyArray<string>) => {
  const path = commandPath(argv, commandDocs)
  // A command that only groups others (`kern kernel`) has nothing to run: its help says what it groups.
  const bareGroup = path !== "" && commandDocs[path]?.runsAlone !== true &&
    Object.keys(commandDocs).some((other) => other.startsWith(`${path} `)) &&
    argv.filter((arg) => !arg.startsWith("-")).length === path.split(" ").length
  const helpWanted = argv.length === 0 || argv.includes("--help") || argv.includes("-h") || bareGroup
  return { path, helpWanted } as const
}

/**
 * One `kern` command line (the arguments after `kern`) as an Effect whose value is the exit code. `src/main.ts` runs it
 * as the process; tests run it in-process, with a Console and a ProcessEnv of their own.
 */
export const kernProgram = (argv: ReadonlyArray<string>, options: { readonly color: boolean }) => {
  const { helpWanted, path } = commandLineOf(argv)

  /** The usage line of the command the user typed (`kern kernel exec …`), or the top-level one. */
  const usageFor = (): string => {
    const doc = commandDocs[path]
    const children = Object.keys(commandDocs).filter((other) =>
      path === "" ? other !== "" && !other.includes(" ") : other.startsWith(`${path} `)
    )
    if (doc === undefined || children.length > 0) {
      const prefix = path === "" ? "kern" : `kern ${path}`
      const names = children.map((child) => child.split(" ").at(-1))
      return `Usage: ${prefix} <${names.join(" | ")}> [options]  (${prefix} --help for more)`
    }
    const lines = Usage.enumerate(doc.usage(), CliConfig.defaultConfig)
      .map((span) => `kern ${path} ${HelpDoc.toAnsiText(HelpDoc.p(span)).replace(/\u001b\[[0-9;]*m/g, "").trim().replace(/^\S+\s*/, "")}`)
    return `Usage: ${lines.join("\n       ")}  (kern ${path} --help for more)`
  }

  // Every usage mistake ends here, whichever command made it: what was wrong, the command's usage, exit 2.
  const report = (error: unknown): Effect.Effect<number> => {
    if (ValidationError.isValidationError(error)) {
      // @effect/cli has already printed what was wrong; add the usage, once.
      return Effect.as(Console.error(usageFor()), 2)
    }
    const { code, line, usage } = failureReport(error)
    return Effect.as(Console.error(usage ? `${line}\n${usageFor()}` : line), code)
  }

  if (argv.includes("--wizard")) {
    // @effect/cli's wizard reads a terminal that scripts do not have; kern does not offer it.
    return Console.error(`kern: unknown option --wizard\n${usageFor()}`).pipe(Effect.as(2))
  }
  const unknown = helpWanted ? undefined : misspelled(argv, path, commandDocs)
  if (unknown !== undefined) return Console.error(`kern: ${unknown}\n${usageFor()}`).pipe(Effect.as(2))
  if (path === "" && argv[0] === "--version") return Console.log(`v${pkg.version}`).pipe(Effect.as(0))
  if (helpWanted) {
    return Console.log(renderHelp(path, commandDocs, `v${pkg.version}`, { color: options.color })).pipe(Effect.as(0))
  }
  // In the foreground only warnings and errors are logged, on stderr (foregroundLogger.ts). The background agent's
  // log file takes everything from debug on (fileLogger.ts), inside this.
  return cli(["node", "kern", ...argv]).pipe(Effect.as(0), Effect.catchAll(report), withForegroundLogging)
}
