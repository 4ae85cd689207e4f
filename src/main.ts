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
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import pkg from "../package.json" with { type: "json" }
import { commands, subcommandUsage } from "./cli/commands.js"
import { exitCodeFor } from "./cli/errors.js"
import { ProcessEnv } from "./config/ProcessEnv.js"

const cli = Command.run(commands, {
  name: "kern",
  version: `v${pkg.version}`,
  executable: "kern"
})

// eslint-disable-next-line no-control-regex
const stripAnsi = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "")

/** The usage line of the subcommand the user typed, or the top-level one. */
const usageFor = (argv: ReadonlyArray<string>): string => {
  const name = argv.find((arg) => Object.hasOwn(subcommandUsage, arg))
  const usage = name === undefined ? undefined : subcommandUsage[name]
  if (name === undefined || usage === undefined) {
    return `Usage: kern <${Object.keys(subcommandUsage).join(" | ")}> [options]  (kern --help for more)`
  }
  const lines = Usage.enumerate(usage(), CliConfig.defaultConfig)
    .map((span) => stripAnsi(HelpDoc.toAnsiText(HelpDoc.p(span))).trim())
  return `Usage: kern ${lines.join("\n       kern ")}  (kern ${name} --help for more)`
}

const report = (error: unknown): Effect.Effect<number> => {
  if (ValidationError.isValidationError(error)) {
    // @effect/cli has already printed what was wrong; add the usage, once.
    return Effect.as(Console.error(usageFor(process.argv.slice(2))), 2)
  }
  const tagged = typeof error === "object" && error !== null ? (error as { _tag?: string; reason?: unknown }) : {}
  const message = error instanceof Error || (typeof error === "object" && error !== null && "message" in error)
    ? String((error as { message: unknown }).message)
    : String(error)
  return Effect.as(Console.error(`kern: ${message}`), exitCodeFor(tagged))
}

const program = cli(process.argv).pipe(
  Effect.as(0),
  Effect.catchAll(report),
  Effect.provideService(ProcessEnv, process.env),
  // What the CLI parser and every command use; a command that runs processes adds its executor itself.
  Effect.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer))
)

// A signal is how `kern run` and `kern tui` are meant to stop: that is a clean exit. Elsewhere it is 130, as usual.
const interruptedCode = ["run", "tui"].includes(process.argv[2] ?? "") ? 0 : 130

NodeRuntime.runMain(program, {
  teardown: (exit, onExit) =>
    onExit(Exit.isSuccess(exit) && typeof exit.value === "number" ? exit.value : Exit.isInterrupted(exit) ? interruptedCode : 1)
})
