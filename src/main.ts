import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { wantsColor } from "./cli/help.js"
import { kernProgram } from "./cli/program.js"
import { exitCodeTeardown } from "./cli/teardown.js"
import { ProcessEnv } from "./config/ProcessEnv.js"

const argv = process.argv.slice(2)

const program = kernProgram(argv, { color: wantsColor(process.env, process.stdout.isTTY === true) }).pipe(
  Effect.provideService(ProcessEnv, process.env),
  // What the CLI parser and every command use; a command that runs processes adds its executor itself.
  Effect.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer))
)

// A signal is how `kern run` and `kern tui` are meant to stop: that is a clean exit. Elsewhere it is 130, as usual.
const interruptedCode = ["run", "tui"].includes(argv[0] ?? "") ? 0 : 130

NodeRuntime.runMain(program, { teardown: exitCodeTeardown(interruptedCode) })
