import * as Command from "@effect/cli/Command"
import * as CliConfig from "@effect/cli/CliConfig"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Usage from "@effect/cli/Usage"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import pkg from "../package.json" with { type: "json" }
import { commandDocs, commands } from "./cli/commands.js"
import { failureReport } from "./cli/errors.js"
import { commandPath, renderHelp, wantsColor } from "./cli/help.js"
import { exitCodeTeardown } from "./cli/teardown.js"
import { ProcessEnv } from "./config/ProcessEnv.js"
import { reduceEnvironment, runsTools } from "./cli/privateEnvironment.js"

const cli = Command.run(commands, {
  name: "kern",
  version: `v${pkg.version}`,
  executable: "kern"
})

const argv = process.argv.slice(2)
const path = commandPath(argv, commandDocs)

/** The usage line of the command the user typed (`kern kernel exec …`), or the top-level one. */
const usageFor = (): string => {
  const name = path
  const doc = commandDocs[name]
  const children = Object.keys(commandDocs).filter((path) => name === "" ? path !== "" && !path.includes(" ") : path.startsWith(`${name} `))
  if (doc === undefined || children.length > 0) {
    const prefix = name === "" ? "kern" : `kern ${name}`
    const names = children.map((path) => path.split(" ").at(-1))
    return `Usage: ${prefix} <${names.join(" | ")}> [options]  (${prefix} --help for more)`
  }
  const lines = Usage.enumerate(doc.usage(), CliConfig.defaultConfig)
    .map((span) => `kern ${name} ${HelpDoc.toAnsiText(HelpDoc.p(span)).replace(/\u001b\[[0-9;]*m/g, "").trim().replace(/^\S+\s*/, "")}`)
  return `Usage: ${lines.join("\n       ")}  (kern ${name} --help for more)`
}

const report = (error: unknown): Effect.Effect<number> => {
  if (ValidationError.isValidationError(error)) {
    // @effect/cli has already printed what was wrong; add the usage, once.
    return Effect.as(Console.error(usageFor()), 2)
  }
  const { code, line } = failureReport(error)
  return Effect.as(Console.error(line), code)
}

// A command that only groups others (`kern kernel`) has nothing to run: its help says what it groups.
const bareGroup = path !== "" && commandDocs[path]?.runsAlone !== true && Object.keys(commandDocs).some((other) => other.startsWith(`${path} `)) &&
  argv.filter((arg) => !arg.startsWith("-")).length === path.split(" ").length
const helpWanted = argv.length === 0 || argv.includes("--help") || argv.includes("-h") || bareGroup

const help = Console.log(
  renderHelp(path, commandDocs, `v${pkg.version}`, {
    color: wantsColor(process.env, process.stdout.isTTY === true)
  })
).pipe(Effect.as(0))

// @effect/cli's wizard reads a terminal that scripts do not have; kern does not offer it.
const refuseWizard = Console.error(`kern: unknown option --wizard\n${usageFor()}`).pipe(Effect.as(2))

const command = cli(process.argv).pipe(Effect.as(0), Effect.catchAll(report))

// A command that runs tools keeps what it inherited in memory only (privateEnvironment.ts); the rest read it as is.
const inherited = !helpWanted && runsTools(path) ? reduceEnvironment(process.env).inherited : process.env

const program = (argv.includes("--wizard") ? refuseWizard : helpWanted ? help : command).pipe(
  Effect.provideService(ProcessEnv, inherited),
  // What the CLI parser and every command use; a command that runs processes adds its executor itself.
  Effect.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer))
)

// A signal is how `kern run` and `kern tui` are meant to stop: that is a clean exit. Elsewhere it is 130, as usual.
const interruptedCode = ["run", "tui"].includes(process.argv[2] ?? "") ? 0 : 130

NodeRuntime.runMain(program, { teardown: exitCodeTeardown(interruptedCode) })
