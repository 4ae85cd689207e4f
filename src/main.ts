import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { wantsColor } from "./config/wantsColor.js"
import { reduceEnvironment, runsTools } from "./cli/privateEnvironment.js"
import { outputClosed } from "./cli/closedOutput.js"
import { commandLineOf, kernProgram } from "./cli/program.js"
import { exitCodeTeardown } from "./cli/teardown.js"
import { ProcessEnv } from "./config/ProcessEnv.js"

const argv = process.argv.slice(2)
const { helpWanted, path } = commandLineOf(argv)
const color = wantsColor(process.env, process.stdout.isTTY === true)

// A command that runs tools keeps what it inherited in memory only (privateEnvironment.ts); the rest read it as is.
const inherited = !helpWanted && runsTools(path) ? reduceEnvironment(process.env).inherited : process.env

const program = kernProgram(argv, { color }).pipe(
  // A closed stdout (`kern chat … | head -1`) ends the command quietly, its scopes closed and its lock released.
  Effect.raceFirst(outputClosed([process.stdout, process.stderr])),
  Effect.provideService(ProcessEnv, inherited),
  // What the CLI parser and every command use; a command that runs processes adds its executor itself.
  Effect.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer))
)

// A signal is how `kern run`, `kern tui` and `kern serve` are meant to stop: that is a clean exit. Elsewhere it is
// 130, as usual.
const interruptedCode = ["run", "tui", "serve"].includes(argv[0] ?? "") ? 0 : 130

NodeRuntime.runMain(program, { teardown: exitCodeTeardown(interruptedCode) })
