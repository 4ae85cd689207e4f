import { Console, Effect, Layer } from "effect"
import { AgentRuntime } from "../agent/AgentRuntime.js"
import { runTerminal } from "../channels/Terminal.js"
import { baseUrl, prepareServer } from "../channels/web/serverSetup.js"
import * as WebServer from "../channels/web/WebServer.js"
import { loadConfig } from "../config/AgentConfig.js"
import { NotAnAgentFolder } from "../config/errors.js"
import { runningAgentLayer } from "./agentLayer.js"

export interface RunArgs {
  readonly dir: string
  /** Seconds to wait for another runtime that holds the folder. */
  readonly wait: number
}

export interface ServeArgs extends RunArgs {
  /** No terminal channel: serve the HTTP API until a signal (what `kern start` runs). */
  readonly background: boolean
}

const stderr = (line: string) => Console.error(`kern: ${line}`)

/** Serves the queue with no terminal: the server keeps the process alive until SIGTERM/SIGINT. */
const serveInBackground = Effect.flatMap(AgentRuntime, (runtime) => runtime.serve)

/**
 * `kern run`: the agent in the foreground with the HTTP API (and web UI) on host:port. On a terminal it is the TUI;
 * headless, stdin lines are operator messages (slash commands included) and it exits 0 once input ends and every
 * queued turn is answered. `--background` has no terminal channel at all and runs until a signal: the daemon.
 * SIGINT/SIGTERM interrupt it: the server stops, scopes close, the session file is synced and closed, the database
 * closed, the folder's lock released.
 */
export const run = (args: ServeArgs) =>
  Effect.gen(function*() {
    const loaded = yield* loadConfig(args.dir)
    if (!loaded.fileExists) return yield* new NotAnAgentFolder({ dir: args.dir })
    const settings = yield* prepareServer(loaded)
    const command = args.background ? "kern start" : "kern run"
    const server = WebServer.layer({ ...settings, command, report: stderr })
    const program = args.background
      ? Effect.zipRight(stderr(`serving ${baseUrl(settings)} (pid ${process.pid})`), serveInBackground)
      : runTerminal({ interactive: process.stdin.isTTY === true })
    yield* program.pipe(Effect.provide(server.pipe(Layer.provideMerge(runningAgentLayer(args.dir, { command, waitSeconds: args.wait })))))
  })

/** `kern tui`: the interactive terminal; leaves when stdin ends (or /quit) once what was typed is answered. */
export const tui = (args: RunArgs) =>
  runTerminal({ interactive: true }).pipe(
    Effect.provide(runningAgentLayer(args.dir, { command: "kern tui", waitSeconds: args.wait }))
  )
