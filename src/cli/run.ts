import { Effect } from "effect"
import { runTerminal } from "../channels/Terminal.js"
import { runningAgentLayer } from "./agentLayer.js"

export interface RunArgs {
  readonly dir: string
  /** Seconds to wait for another runtime that holds the folder. */
  readonly wait: number
}


/**
 * `kern run`: the agent in the foreground. On a terminal it is the TUI; headless, stdin lines are operator
 * messages (slash commands included) and it exits 0 once input ends and every queued turn is answered.
 * SIGINT/SIGTERM interrupt it: scopes close, the session file is synced and closed, the database closed, the
 * folder's lock released.
 */
export const run = (args: RunArgs) =>
  runTerminal({ interactive: process.stdin.isTTY === true }).pipe(
    Effect.provide(runningAgentLayer(args.dir, { command: "kern run", waitSeconds: args.wait }))
  )

/** `kern tui`: the interactive terminal; leaves when stdin ends (or /quit) once what was typed is answered. */
export const tui = (args: RunArgs) =>
  runTerminal({ interactive: true }).pipe(
    Effect.provide(runningAgentLayer(args.dir, { command: "kern tui", waitSeconds: args.wait }))
  )
