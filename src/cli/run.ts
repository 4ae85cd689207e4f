import { Effect } from "effect"
import { runTerminal } from "../channels/Terminal.js"
import { runningAgentLayer } from "./agentLayer.js"

export interface RunArgs {
  readonly dir: string
}


/**
 * `kern run`: the agent in the foreground. On a terminal it is the TUI; headless, stdin lines are operator
 * messages and the runtime keeps serving after stdin ends. SIGINT/SIGTERM interrupt it: scopes close, the session
 * file is synced and closed, the database closed.
 */
export const run = (args: RunArgs) =>
  runTerminal({ interactive: process.stdin.isTTY === true, exitOnEof: false }).pipe(Effect.provide(runningAgentLayer(args.dir)))

/** `kern tui`: the interactive terminal; leaves when stdin ends (or /quit) once what was typed is answered. */
export const tui = (args: RunArgs) =>
  runTerminal({ interactive: true, exitOnEof: true }).pipe(Effect.provide(runningAgentLayer(args.dir)))
