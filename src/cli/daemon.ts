import { FileSystem } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Clock, Console, Duration, Effect, Option } from "effect"
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { type AgentAddress, findRunning, locateHosted, wakeTimeout } from "../channels/web/running.js"
import { baseUrl, prepareServer } from "../channels/web/serverSetup.js"
import { loadConfig, type LoadedConfig } from "../config/AgentConfig.js"
import { NotAnAgentFolder } from "../config/errors.js"
import * as LockFile from "../storage/LockFile.js"
import * as PidFile from "../storage/PidFile.js"
import { privateDirMode, privateFileMode } from "../storage/privateFiles.js"
import { processRunning } from "../storage/processState.js"
import { daemonFiles, type Level, logFrom, logSize, rotateLog } from "./daemonFiles.js"
import { atLevel, levelRank, type LogLine, readLines, renderJson, renderText } from "./logRecord.js"
import { CommandFailed } from "./errors.js"
import { agentLines, hostedBy, hostHomeOf } from "./hostedAgent.js"

export interface DaemonArgs {
  readonly dir: string
}

const agentFolder = (dir: string) =>
  Effect.gen(function*() {
    const loaded = yield* loadConfig(dir)
    if (!loaded.fileExists) return yield* new NotAnAgentFolder({ dir })
    return loaded
  })

/** How long `kern start` waits for /health, and `kern stop` for the agent to finish its turn and exit. */
const startTimeout = Duration.seconds(60)
const stopGrace = Duration.seconds(20)

/** The running agent of the folder, over HTTP (none when it does not answer). */
const running = findRunning

/** Commands reach the agent with one HTTP client for their whole run. */
const withHttp = Effect.provide(NodeHttpClient.layerUndici)

/** The process that holds the folder now, from its lock (a dead holder reads as none). */
const holder = (loaded: LoadedConfig) =>
  LockFile.readHolder(loaded.paths.lockFile).pipe(Effect.orElseSucceed(() => Option.none<LockFile.LockHolder>()))

/** What `kern start` and `kern stop` say of an agent a running `kern serve` hosts, and why they leave it alone. */
const hostedByLine = (loaded: LoadedConfig, where: AgentAddress, why: string): string =>
  `${loaded.config.name} is hosted by kern serve (pid ${where.pid}, ${where.address}); ${why}. ` +
  `The host wakes it when a message, its web UI (kern open) or a schedule needs it and passivates it after idleSeconds with nothing to do; ` +
  `to run it on its own, remove it from the host's host.json first`

/** Spawns `kern run --background` detached: no terminal, stdin closed, stdout and stderr appended to the log. */
const spawnAgent = (loaded: LoadedConfig, logFile: string) =>
  Effect.try({
    try: () => {
      NodeFs.mkdirSync(NodePath.dirname(logFile), { recursive: true, mode: privateDirMode })
      const fd = NodeFs.openSync(logFile, "a", privateFileMode)
      const bin = process.argv[1] ?? "kern"
      const child = spawn(process.execPath, [bin, "run", loaded.paths.dir, "--background", "--wait", "0"], {
        detached: true,
        stdio: ["ignore", fd, fd],
        cwd: loaded.paths.dir,
        env: process.env
      })
      NodeFs.closeSync(fd)
      child.unref()
      if (child.pid === undefined) throw new Error("the process did not start")
      return child.pid
    },
    catch: (error) => new CommandFailed({ message: `could not start the agent: ${error instanceof Error ? error.message : String(error)}` })
  })

/**
 * What a failed start shows of the agent's log: its records at info and above, and what it wrote outside the logger
 * (its last error, a crash's stack, Node's warnings). The debug records (migrations, the cluster's start and shutdown,
 * a shutdown's cause with its stack) stay in the log for `kern logs --level debug`.
 */
const startLines = (lines: ReadonlyArray<LogLine>): ReadonlyArray<LogLine> =>
  lines.filter((line) => !line.json || levelRank(line.record.level) >= levelRank("info"))

/**
 * `kern start`: the agent in the background. Port and token are made first (so this process knows where to look),
 * then `kern run --background` is spawned detached; this waits until /health answers as that process, or prints
 * what the agent said while failing to start (startLines) and exits 1.
 */
const startIn = (args: DaemonArgs) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const first = yield* agentFolder(args.dir)
    const { logFile, pidFile } = daemonFiles(first.paths)
    const already = yield* running(first)
    if (Option.isSome(already)) {
      return yield* Console.log(`${first.config.name} already runs: pid ${already.value.health.pid}, ${already.value.client.baseUrl}`)
    }
    const hosted = yield* locateHosted(first)
    if (Option.isSome(hosted)) return yield* new CommandFailed({ message: hostedByLine(first, hosted.value, "kern start would take its folder from the host") })
    const held = yield* holder(first)
    if (Option.isSome(held)) {
      return yield* new CommandFailed({
        message: `${first.paths.dir} is held by pid ${held.value.pid} (${held.value.command}); stop it first`
      })
    }
    const settings = yield* prepareServer(first)
    // Read again: the port and token are in the files now.
    const loaded = yield* agentFolder(args.dir)
    yield* rotateLog(logFile)
    const offset = yield* logSize(logFile)
    const pid = yield* spawnAgent(loaded, logFile)
    // Recorded with its start time (so a stop after a crash never signals a process that got the pid since) and its
    // address (so clients find it before it has taken the folder's lock).
    yield* PidFile.write(pidFile, yield* LockFile.holderFor(pid, "kern start", baseUrl(settings)))
    const deadline = (yield* Clock.currentTimeMillis) + Duration.toMillis(startTimeout)
    for (;;) {
      const up = yield* running(loaded)
      if (Option.isSome(up) && up.value.health.pid === pid) {
        return yield* Console.log(`${loaded.config.name} runs in the background: pid ${pid}, ${up.value.client.baseUrl} (kern open logs a browser in)`)
      }
      if (!processRunning(pid) || (yield* Clock.currentTimeMillis) > deadline) {
        const said = startLines(readLines((yield* logFrom(logFile, offset)).trim().split("\n")).lines).map(renderText).join("\n").trim()
        if (processRunning(pid)) yield* signal(pid, "SIGTERM")
        yield* fs.remove(pidFile, { force: true })
        return yield* new CommandFailed({
          message: `the agent did not start${processRunning(pid) ? ` within ${Duration.format(startTimeout)}` : ""}${said === "" ? "" : `:\n${said}`}`
        })
      }
      yield* Effect.sleep(Duration.millis(100))
    }
  })

/**
 * The background agent's pid: agent.pid's when that pid is still the process kern start launched (same start time),
 * else the lock's live holder when it is a `kern start`. A pid reused by another process is never signalled; why it
 * was not trusted is told on stderr.
 */
const backgroundPid = (loaded: LoadedConfig) =>
  Effect.gen(function*() {
    const { pidFile } = daemonFiles(loaded.paths)
    const record = yield* PidFile.read(pidFile)
    const found = Option.isSome(record) ? Option.some(yield* PidFile.check(record.value)) : Option.none<PidFile.Check>()
    if (Option.isSome(found) && found.value._tag === "Running") return Option.some(found.value.holder.pid)
    const held = yield* holder(loaded)
    if (Option.isSome(held) && held.value.command === "kern start") return Option.some(held.value.pid)
    const why = Option.flatMap(found, (check) => Option.fromNullable(PidFile.distrust(pidFile, check)))
    if (Option.isSome(why)) yield* Console.error(`kern: ${why.value}`)
    return Option.none<number>()
  })

/** Sends a signal; a process that is already gone is not an error. */
const signal = (pid: number, name: NodeJS.Signals) =>
  Effect.try({ try: () => process.kill(pid, name), catch: (error) => error as NodeJS.ErrnoException }).pipe(
    Effect.asVoid,
    Effect.catchIf((error) => error.code === "ESRCH", () => Effect.void),
    Effect.mapError((error) => new CommandFailed({ message: `could not signal pid ${pid}: ${error.message}` }))
  )

/** Whether the process exited within the time given. */
const waitForExit = (pid: number, within: Duration.Duration) =>
  Effect.gen(function*() {
    const deadline = (yield* Clock.currentTimeMillis) + Duration.toMillis(within)
    while (processRunning(pid)) {
      if ((yield* Clock.currentTimeMillis) > deadline) return false
      yield* Effect.sleep(Duration.millis(100))
    }
    return true
  })

/** `kern stop`: SIGTERM (the turn in progress finishes its step, files are closed), then SIGKILL after a grace. */
const stopIn = (args: DaemonArgs) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const loaded = yield* agentFolder(args.dir)
    const { pidFile } = daemonFiles(loaded.paths)
    const pid = yield* backgroundPid(loaded)
    if (Option.isNone(pid)) {
      yield* fs.remove(pidFile, { force: true })
      // A hosted agent, awake or asleep, is its host's: kern stop does not take it from the host (nor stop the host).
      const hosted = yield* locateHosted(loaded)
      if (Option.isSome(hosted)) return yield* new CommandFailed({ message: hostedByLine(loaded, hosted.value, "kern stop leaves it to the host") })
      return yield* Console.log(`${loaded.config.name} is not running in the background`)
    }
    yield* signal(pid.value, "SIGTERM")
    let stopped = yield* waitForExit(pid.value, stopGrace)
    if (!stopped) {
      yield* Console.error(`kern: pid ${pid.value} did not stop within ${Duration.format(stopGrace)}; killing it`)
      yield* signal(pid.value, "SIGKILL")
      stopped = yield* waitForExit(pid.value, Duration.seconds(5))
    }
    if (!stopped) return yield* new CommandFailed({ message: `pid ${pid.value} is still running` })
    yield* fs.remove(pidFile, { force: true })
    yield* Console.log(`${loaded.config.name} stopped (pid ${pid.value})`)
  })

export const restart = (args: DaemonArgs) => Effect.zipRight(stopIn(args), startIn(args)).pipe(withHttp)

export interface LogsArgs extends DaemonArgs {
  readonly follow: boolean
  readonly lines: number
  readonly level: Option.Option<Level>
  /** One JSON object per line (time, level, message, annotations, spans) instead of text. */
  readonly json?: boolean | undefined
  /** `dir` is a `kern serve` home (or its host.json): the host's log. */
  readonly host?: boolean | undefined
}

/**
 * `kern logs`: the last lines of the background agent's log at a level or above (info unless `--level` says), as text
 * or (`--json`) one JSON record per line; `-f` follows it. A hosted agent's lines are in its host's log, annotated
 * with its name (unless a `kern start` of its own runs it now); `--host` is the host's whole log.
 */
export const logs = (args: LogsArgs) =>
  Effect.gen(function*() {
    if (args.host === true) return yield* printLog((yield* hostHomeOf(args.dir)).logFile, args, () => true)
    const loaded = yield* agentFolder(args.dir)
    const held = yield* holder(loaded)
    const hosted = Option.isSome(held) && held.value.command !== "kern serve" ? Option.none() : yield* hostedBy(loaded)
    if (Option.isNone(hosted)) return yield* printLog(daemonFiles(loaded.paths).logFile, args, () => true)
    yield* Console.error(`kern: ${loaded.config.name} is hosted by the kern serve of ${hosted.value.files.home}: its lines of ${hosted.value.files.logFile}`)
    yield* printLog(hosted.value.files.logFile, args, agentLines(hosted.value.name))
  })

/** The log's last lines that `keep` keeps, at the level or above; then, with `follow`, each new one as it comes. */
const printLog = (logFile: string, args: LogsArgs, keep: (line: LogLine) => boolean) =>
  Effect.gen(function*() {
    const level = Option.getOrElse(args.level, (): Level => "info")
    const render = args.json === true ? renderJson : renderText
    const shown = (lines: ReadonlyArray<LogLine>) => atLevel(lines, level).filter(keep)
    const print = (lines: ReadonlyArray<LogLine>) => lines.length === 0 ? Effect.void : Console.log(lines.map(render).join("\n"))
    const all = (yield* logFrom(logFile, 0)).split("\n")
    if (all.at(-1) === "") all.pop()
    const read = readLines(all)
    const kept = shown(read.lines)
    // slice(-0) is the whole array: -n 0 means none of the old lines (with -f, only what comes next).
    yield* print(args.lines === 0 ? [] : kept.slice(-args.lines))
    if (!args.follow) return
    let offset = yield* logSize(logFile)
    let carried = read.carried
    let partial = ""
    for (;;) {
      yield* Effect.sleep(Duration.millis(250))
      const size = yield* logSize(logFile)
      // Rotated (truncated): start again from its beginning.
      if (size < offset) offset = 0
      if (size === offset) continue
      const text = partial + (yield* logFrom(logFile, offset))
      offset = size
      const lines = text.split("\n")
      partial = lines.pop() ?? ""
      const next = readLines(lines, carried)
      carried = next.carried
      yield* print(shown(next.lines))
    }
  })

/** Whether a desktop session can open a browser here. */
const desktop = (env: Readonly<Record<string, string>>) =>
  (env.DISPLAY !== undefined && env.DISPLAY !== "") || (env.WAYLAND_DISPLAY !== undefined && env.WAYLAND_DISPLAY !== "")

const xdgOpen = (env: Readonly<Record<string, string>>): string | undefined =>
  (env.PATH ?? "").split(NodePath.delimiter).map((dir) => NodePath.join(dir, "xdg-open")).find((file) => NodeFs.existsSync(file))

/**
 * `kern open`: a one-time login URL for the web UI (a ticket valid 60 s, exchanged for a session cookie), printed,
 * and opened in the desktop's browser when there is one.
 */
const openIn = (args: DaemonArgs) =>
  Effect.gen(function*() {
    const loaded = yield* agentFolder(args.dir)
    // A hosted agent asleep is woken by its host for the login.
    const up = yield* findRunning(loaded, { wake: wakeTimeout })
    if (Option.isNone(up)) {
      return yield* new CommandFailed({ message: `${loaded.config.name} is not running: start it with kern start (or kern run)` })
    }
    const issued = yield* up.value.client.ticket
    yield* Console.log(issued.url)
    const opener = xdgOpen(loaded.env)
    if (desktop(loaded.env) && opener !== undefined) {
      yield* Effect.try(() => spawn(opener, [issued.url], { detached: true, stdio: "ignore" }).unref()).pipe(
        Effect.catchAll(() => Console.error("kern: could not open a browser; open the URL above"))
      )
    }
  })

export const start = (args: DaemonArgs) => startIn(args).pipe(withHttp)
export const stop = (args: DaemonArgs) => stopIn(args).pipe(withHttp)
export const open = (args: DaemonArgs) => openIn(args).pipe(withHttp)
