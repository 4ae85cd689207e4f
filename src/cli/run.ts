import { FileSystem } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Console, Duration, Effect, Layer, Option, Schedule } from "effect"
import * as Terminal from "../channels/Terminal.js"
import { attach } from "../channels/web/remoteTerminal.js"
import { reachRunning } from "../channels/web/running.js"
import { baseUrl, prepareServer, type ServerSettings } from "../channels/web/serverSetup.js"
import * as WebServer from "../channels/web/WebServer.js"
import * as ChatChannels from "../channels/chatChannels.js"
import { loadConfig, type LoadedConfig } from "../config/AgentConfig.js"
import * as KnownSecrets from "../config/KnownSecrets.js"
import { NotAnAgentFolder } from "../config/errors.js"
import * as Layers from "../runtime/layers.js"
import { agentZone } from "../session/envelope.js"
import { runningAgentLayerWith } from "./agentLayer.js"
import * as LockFile from "../storage/LockFile.js"
import * as PidFile from "../storage/PidFile.js"
import { daemonFiles, rotateLog } from "./daemonFiles.js"
import { jsonLineLogging } from "./fileLogger.js"

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

/**
 * A log line that cannot be written (the log's disk is full) is dropped, and the agent goes on: Node reports a failed
 * write to stderr as an 'error' event, and one nobody listens to ends the process. There is nowhere left to say it.
 */
const survivableStderr = Layer.scopedDiscard(Effect.acquireRelease(
  Effect.sync(() => {
    const dropped = () => {}
    process.stderr.on("error", dropped)
    return dropped
  }),
  (dropped) => Effect.sync(() => process.stderr.off("error", dropped))
))

/**
 * The background agent's log: JSON lines on stderr (the log file, .kern/logs/kern.log), every known secret of the
 * folder redacted; `kern logs` renders them.
 */
const backgroundLogging = (loaded: LoadedConfig, settings: ServerSettings) => {
  // The token prepareServer may have just made is a secret of the folder too.
  const { secrets } = KnownSecrets.fromConfig({ ...loaded, env: { ...loaded.env, KERN_AUTH_TOKEN: settings.token } })
  return Layer.merge(jsonLineLogging(secrets, (line) => process.stderr.write(line)), survivableStderr)
}

/**
 * The background agent's housekeeping: its pid in `.kern/agent.pid` while it runs (removed when it stops, unless a
 * newer start has written its own), and its log rotated as it grows.
 */
const daemonHousekeeping = (dir: string, address: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const { logFile, pidFile } = daemonFiles((yield* loadConfig(dir)).paths)
    yield* Effect.acquireRelease(
      Effect.flatMap(LockFile.currentHolder("kern start", address), (me) => PidFile.write(pidFile, me)),
      () =>
        Effect.flatMap(PidFile.read(pidFile), (record) =>
          Option.isSome(record) && record.value.pid === process.pid ? fs.remove(pidFile, { force: true }) : Effect.void).pipe(
          Effect.catchAll((error) => Effect.logWarning(`could not remove ${pidFile}: ${error.message}`))
        )
    )
    yield* Effect.forkScoped(
      rotateLog(logFile).pipe(
        Effect.catchAll((error) => Effect.logWarning(`could not rotate ${logFile}: ${error.message}`)),
        Effect.repeat(Schedule.spaced("1 minute"))
      )
    )
  })

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
    return yield* serve(args, settings).pipe(Effect.provide(args.background ? backgroundLogging(loaded, settings) : Layer.empty))
  })

const serve = (args: ServeArgs, settings: ServerSettings) =>
  Effect.gen(function*() {
    const command = args.background ? "kern start" : "kern run"
    const report = args.background ? (line: string) => Effect.logWarning(line) : stderr
    const server = WebServer.layer({ ...settings, command, report })
    // The HTTP API, the chat channels (and the terminal's feed) attached to the running agent: each subscribes before
    // the agent serves a turn. Closing the layer (a signal) stops the serving first, then everything below it.
    const agent = <A, E, R>(terminal: Layer.Layer<A, E, R>) =>
      Layers.runningAgentLayerWith(
        args.dir,
        { command, waitSeconds: args.wait, report, address: baseUrl(settings) },
        Layer.mergeAll(server, ChatChannels.layer, terminal)
      )
    if (!args.background) {
      const interactive = process.stdin.isTTY === true
      // On a terminal, say where the browser and other clients find this agent; headless output stays the replies.
      const notice = interactive ? stderr(`HTTP API and web UI on ${baseUrl(settings)} (kern open logs a browser in)`) : Effect.void
      return yield* Effect.zipRight(notice, Terminal.runTerminal({ interactive })).pipe(Effect.provide(agent(Terminal.feedLayer)))
    }
    yield* Effect.scoped(Effect.gen(function*() {
      yield* daemonHousekeeping(args.dir, baseUrl(settings))
      yield* Effect.logInfo(`serving ${baseUrl(settings)} (pid ${process.pid})`)
      // The agent serves (the layer's turn loop and heartbeat) until a signal interrupts this.
      yield* Effect.never
    })).pipe(Effect.provide(agent(Layer.empty)))
  })

/**
 * `kern tui`: the interactive terminal. Attached over HTTP when the agent runs (Ctrl-C leaves it running); otherwise
 * in-process, leaving when stdin ends (or /quit) once what was typed is answered.
 */
export const tui = (args: RunArgs) =>
  Effect.gen(function*() {
    const loaded = yield* loadConfig(args.dir)
    const up = loaded.fileExists ? yield* reachRunning(loaded, { wait: Duration.seconds(args.wait), report: stderr }) : Option.none()
    if (Option.isSome(up)) return yield* attach(up.value.client, loaded.config.name, agentZone(loaded.config.timezone))
    yield* Terminal.runTerminal({ interactive: true }).pipe(
      Effect.provide(runningAgentLayerWith(args.dir, { command: "kern tui", waitSeconds: args.wait }, Terminal.feedLayer))
    )
  }).pipe(Effect.provide(NodeHttpClient.layerUndici))
