import { FileSystem } from "@effect/platform"
import { Context, Duration, Effect, Layer, Option, Schema, type Scope } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import * as NodeOs from "node:os"
import * as LockFile from "../storage/LockFile.js"
import { privateDirMode, tightenPrivateDir } from "../storage/privateFiles.js"
import { describeKilled, reapFolder } from "../tools/processTag.js"

/**
 * One runtime writes an agent folder at a time: whatever runs turns (`kern run`, `chat`, `tui`, later the daemon)
 * holds `.kern/agent.lock` for its lifetime. Read-only commands never take it; `holder` tells them (and, once the
 * HTTP API exists, `kern chat`) whether an agent is running and which. A runtime that serves the HTTP API records its
 * address in the lock, so every client finds it where it listens, whatever port its own environment chose.
 *
 * Taking the folder is also where what a killed runtime left behind is cleaned up: the processes its bash calls
 * started (tagged with the folder) are killed before this runtime runs a call of its own, and the report says so.
 */

/** The folder stayed held by another runtime for the whole wait. */
export class AgentBusy extends Schema.TaggedError<AgentBusy>()("AgentBusy", {
  dir: Schema.String,
  pid: Schema.optional(Schema.Int),
  command: Schema.optional(Schema.String),
  since: Schema.optional(Schema.String),
  waitedSeconds: Schema.Number
}) {
  override get message(): string {
    const by = this.pid === undefined ? "another process" : `pid ${this.pid} (${this.command ?? "kern"}) since ${this.since ?? "?"}`
    return `the agent in ${this.dir} is busy: held by ${by}; gave up after ${this.waitedSeconds} s (--wait to wait longer)`
  }
}

/**
 * The folder is held by a running agent, which lets go only when it is stopped, and the command that wanted it cannot
 * wait that long (a rebuild of what the agent uses).
 */
export class AgentRunning extends Schema.TaggedError<AgentRunning>()("AgentRunning", {
  dir: Schema.String,
  pid: Schema.Int,
  holder: Schema.String,
  since: Schema.String,
  command: Schema.String,
  advice: Schema.String
}) {
  override get message(): string {
    return `${this.command} needs the agent folder to itself, and the agent in ${this.dir} runs (pid ${this.pid}, ` +
      `${this.holder} since ${this.since}) until it is stopped: ${this.advice}`
  }
}

/** The holders that run until stopped (the agent itself), as opposed to one command that ends on its own. */
const agentCommands: ReadonlySet<string> = new Set(["kern run", "kern start", "kern tui", "kern serve"])

/** Whether `holder` is a running agent: it serves the HTTP API, or is one of the commands that run the agent. */
export const runsUntilStopped = (holder: LockFile.LockHolder): boolean =>
  holder.address !== undefined || agentCommands.has(holder.command)

export interface HoldOptions {
  /** What holds the folder, for the messages of those who wait (`kern chat`). */
  readonly command: string
  /** How long to wait for a runtime that holds it; zero tries once. */
  readonly wait: Duration.DurationInput
  /** Where the one waiting line and takeover notices go (stderr in the CLI). */
  readonly report: (line: string) => Effect.Effect<void>
  /** Where this runtime's HTTP API listens, when it serves one (`http://127.0.0.1:4800`). */
  readonly address?: string | undefined
  /**
   * Set by a command that must not wait for a running agent (it would wait until someone stops it): such a holder is
   * refused at once with AgentRunning and this advice. Unset, every holder is waited for.
   */
  readonly whileAgentRuns?: string | undefined
  /**
   * Set by a `kern serve` among several runners, which holds the folder only while the cluster gives it the agent
   * (AgentPlacement.hold): recorded in the lock, and the cluster is the authority over a lock another runner of the
   * same cluster left on another machine (killed there: its pid cannot be checked from here), which is taken over.
   * On this machine a dead holder's lock is stale anyway, and a live one is waited for (it is letting the agent go).
   */
  readonly cluster?: LockFile.LockHolder["cluster"]
}

/**
 * Whether `holder` is another runner of `cluster` on another machine: the cluster gave this runner the agent, so that
 * runner no longer holds it, whatever its lock says. A plain `kern start` (no cluster) is never taken over so.
 */
export const releasedByCluster = (cluster: LockFile.LockHolder["cluster"]): LockFile.Released => (holder) =>
  cluster !== undefined && holder.cluster !== undefined && holder.cluster.database === cluster.database &&
    holder.host !== NodeOs.hostname()
    ? `runner ${holder.cluster.runner} on ${holder.host} no longer holds this agent: the cluster gave it to this runner`
    : undefined

export interface AgentLockShape {
  /** `.kern/agent.lock` of the folder. */
  readonly file: string
  /** The runtime holding the folder now, if any; a lock left by a dead process reads as none. */
  readonly holder: Effect.Effect<Option.Option<LockFile.LockHolder>, LockFile.LockFileError>
  /** Holds the folder until the scope closes, waiting for a current holder to let go. */
  readonly hold: (options: HoldOptions) => Effect.Effect<void, AgentBusy | AgentRunning | LockFile.LockFileError, Scope.Scope>
}

export class AgentLock extends Context.Tag("kern/runtime/AgentLock")<AgentLock, AgentLockShape>() {}

const pollInterval = Duration.millis(100)

const describe = (holder: Option.Option<LockFile.LockHolder>) =>
  Option.match(holder, {
    onNone: () => "another process",
    onSome: (h) => `pid ${h.pid} (${h.command}) since ${h.startedAt}`
  })

const plural = (n: number) => `${n} process${n === 1 ? "" : "es"}`

/** Kills what the bash calls of a previous runtime of `dir` left running (it was killed before it could). */
const reapLeftovers = (dir: string, report: HoldOptions["report"]) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.realPath(dir).pipe(
      Effect.mapError((error) => new LockFile.LockFileError({ file: dir, detail: `could not resolve the folder: ${error.message}` }))
    )
    const reaped = yield* reapFolder(root)
    if (reaped.killed.length > 0) {
      yield* report(`reaped ${plural(reaped.killed.length)} a previous run of this agent left running: ${describeKilled(reaped.killed)}`)
    }
    if (reaped.survivors > 0) yield* report(`warning: ${plural(reaped.survivors)} a previous run left still run after repeated kills`)
  })

/** The lock of the agent folder `dir`, kept in `file` inside its `.kern/` folder `kernDir`. */
export const make = (dir: string, kernDir: string, file: string) =>
  Effect.map(FileSystem.FileSystem, (fs): AgentLockShape => {
    const provide = Effect.provideService(FileSystem.FileSystem, fs)
    return {
      file,
      holder: provide(LockFile.readHolder(file)),
      hold: (options) =>
        Effect.gen(function*() {
          const me = yield* LockFile.currentHolder(options.command, options.address, options.cluster)
          const released = releasedByCluster(options.cluster)
          if (options.whileAgentRuns !== undefined) {
            const current = yield* LockFile.readHolder(file)
            if (Option.isSome(current) && runsUntilStopped(current.value) && released(current.value) === undefined) {
              return yield* new AgentRunning({
                dir,
                pid: current.value.pid,
                holder: current.value.command,
                since: current.value.startedAt,
                command: options.command,
                advice: options.whileAgentRuns
              })
            }
          }
          yield* fs.makeDirectory(kernDir, { recursive: true, mode: privateDirMode }).pipe(
            Effect.mapError((error) => new LockFile.LockFileError({ file, detail: error.message }))
          )
          // What an older kern (or a umask) left readable to others is made private before anything runs.
          const stayedOpen = yield* tightenPrivateDir(kernDir)
          yield* Effect.forEach(stayedOpen, (failure) => options.report(`warning: ${failure.message}`), { discard: true })
          yield* LockFile.acquire(file, me, {
            wait: options.wait,
            poll: pollInterval,
            onWait: (holder) => options.report(`waiting for the agent in ${dir}: held by ${describe(holder)}`),
            onTakeOver: (why) => options.report(`warning: took over ${file}: ${why}`),
            released
          }).pipe(
            Effect.catchTag("LockBusy", (busy) =>
              Effect.fail(
                new AgentBusy({
                  dir,
                  pid: Option.getOrUndefined(Option.map(busy.holder, (h) => h.pid)),
                  command: Option.getOrUndefined(Option.map(busy.holder, (h) => h.command)),
                  since: Option.getOrUndefined(Option.map(busy.holder, (h) => h.startedAt)),
                  waitedSeconds: Duration.toSeconds(Duration.decode(options.wait))
                })
              ))
          )
          yield* reapLeftovers(dir, options.report)
        }).pipe(provide, Effect.withSpan("kern.agent.AgentLock.hold"))
    }
  })

/** The lock of the loaded agent folder, not held: for read-only commands that ask who runs it. */
export const layer: Layer.Layer<AgentLock, never, AgentConfig | FileSystem.FileSystem> = Layer.effect(
  AgentLock,
  Effect.flatMap(AgentConfig, ({ paths }) => make(paths.dir, paths.kernDir, paths.lockFile))
)

/** The lock of the loaded agent folder, held for the layer's lifetime: what every turn runner builds on. */
export const layerHeld = (options: HoldOptions): Layer.Layer<
  AgentLock,
  AgentBusy | AgentRunning | LockFile.LockFileError,
  AgentConfig | FileSystem.FileSystem
> =>
  Layer.scoped(
    AgentLock,
    Effect.gen(function*() {
      const { paths } = yield* AgentConfig
      const lock = yield* make(paths.dir, paths.kernDir, paths.lockFile)
      yield* lock.hold(options)
      return lock
    })
  )
