import { Data, Duration, Effect, Option, Ref, Schedule } from "effect"
import type { LoadedConfig } from "../../config/AgentConfig.js"
import * as LockFile from "../../storage/LockFile.js"
import * as PidFile from "../../storage/PidFile.js"
import * as Client from "./client.js"
import { baseUrl } from "./serverSetup.js"

/** Where the folder's running agent listens, and whether it recorded that itself. */
export interface AgentAddress {
  readonly pid: number
  readonly address: string
  /**
   * The runtime recorded its address (in the lock, or in agent.pid while `kern start` launches it): it serves the
   * HTTP API there, so a client waits for it rather than run a turn itself. False for the config's port, a guess.
   */
  readonly recorded: boolean
}

/**
 * Where the agent of a folder runs, by what it recorded: the address in the lock of its live holder; while `kern start`
 * launches it and it has not taken the lock yet, the address in agent.pid (when that pid is still the process kern
 * start launched). A holder that recorded none (an older kern, an embedding app) is looked for on the config's
 * port. None when nothing runs the folder.
 */
export const locate = (loaded: LoadedConfig) =>
  Effect.gen(function*() {
    const holder = yield* LockFile.readHolder(loaded.paths.lockFile)
    if (Option.isSome(holder)) {
      const { address, pid } = holder.value
      if (address !== undefined) return Option.some<AgentAddress>({ pid, address, recorded: true })
      const port = loaded.config.port
      return port === undefined
        ? Option.none<AgentAddress>()
        : Option.some<AgentAddress>({ pid, address: baseUrl({ host: loaded.config.host, port }), recorded: false })
    }
    const record = yield* PidFile.read(loaded.paths.pidFile).pipe(
      Effect.mapError((error) => new LockFile.LockFileError({ file: loaded.paths.pidFile, detail: error.message }))
    )
    if (Option.isNone(record)) return Option.none<AgentAddress>()
    const found = yield* PidFile.check(record.value)
    return found._tag === "Running" && found.holder.address !== undefined
      ? Option.some<AgentAddress>({ pid: found.holder.pid, address: found.holder.address, recorded: true })
      : Option.none<AgentAddress>()
  }).pipe(Effect.withSpan("kern.web.running.locate"))

const clientOf = (loaded: LoadedConfig, where: AgentAddress) => {
  const token = loaded.env.KERN_AUTH_TOKEN
  return token === undefined || token === ""
    ? Effect.succeed(Option.none<Client.AgentClient>())
    : Effect.map(Client.make({ baseUrl: where.address, token }), Option.some)
}

/** The agent's answer to /health, when it answers as this folder's agent (its name). */
const healthOf = (loaded: LoadedConfig, client: Client.AgentClient) =>
  Effect.map(Effect.option(client.health), Option.filter((health) => health.name === loaded.config.name))

/**
 * The running agent of a folder, when one answers where it recorded it listens, as that agent (its name); none when
 * it does not run or does not answer now. Whatever runs it (`kern start`, or `kern run` in another terminal),
 * clients talk to it over HTTP.
 */
export const findRunning = (loaded: LoadedConfig) =>
  Effect.gen(function*() {
    const where = yield* locate(loaded)
    if (Option.isNone(where)) return Option.none()
    const client = yield* clientOf(loaded, where.value)
    if (Option.isNone(client)) return Option.none()
    const health = yield* healthOf(loaded, client.value)
    return Option.map(health, (health) => ({ client: client.value, health }))
  })

class NameMismatch extends Data.TaggedError("NameMismatch")<{ readonly message: string }> {}

/** Between two tries of a slow agent. */
const retrySpacing = Duration.millis(500)

export interface ReachOptions {
  /** How long to keep trying an agent that runs but does not answer. */
  readonly wait: Duration.DurationInput
  /** Where the one progress line goes (stderr in the CLI). */
  readonly report: (line: string) => Effect.Effect<void>
}

/**
 * The running agent for a client that would otherwise run the turn itself (`kern chat`, `kern tui`): while the lock
 * or agent.pid say an agent runs and serves, a slow answer is tried again (one progress line) for up to `wait`, and
 * never taken as a sign to run the turn here, which would only race the agent for the folder. None when no agent
 * serves the folder; a ClientError when it runs and did not answer within `wait`.
 */
export const reachRunning = (loaded: LoadedConfig, options: ReachOptions) =>
  Effect.gen(function*() {
    const told = yield* Ref.make(false)
    const attempt = Effect.gen(function*() {
      const where = yield* locate(loaded)
      if (Option.isNone(where)) return Option.none()
      const client = yield* clientOf(loaded, where.value)
      if (Option.isNone(client)) return Option.none()
      const health = yield* Effect.option(client.value.health)
      if (Option.isSome(health) && health.value.name === loaded.config.name) return Option.some({ client: client.value, health: health.value })
      if (!where.value.recorded) return Option.none()
      if (Option.isSome(health)) {
        // Not a slow answer: another name (KERN_NAME at its start, or another program there). Waiting will not help.
        return yield* Effect.fail(new NameMismatch({
          message: `the agent (pid ${where.value.pid}) at ${where.value.address} answers as ${JSON.stringify(health.value.name)}, not ${JSON.stringify(loaded.config.name)}; use the same KERN_NAME as its start`
        }))
      }
      if (!(yield* Ref.getAndSet(told, true))) {
        yield* options.report(
          `the agent (pid ${where.value.pid}) at ${where.value.address} has not answered yet; trying again for up to ${Duration.format(options.wait)}`
        )
      }
      return yield* new Client.ClientError({
        reason: "unreachable",
        message: `the agent (pid ${where.value.pid}) at ${where.value.address} runs but did not answer within ${Duration.format(options.wait)} (kern logs shows what it does)`
      })
    })
    return yield* attempt.pipe(
      Effect.retry({
        schedule: Schedule.spaced(retrySpacing).pipe(Schedule.upTo(options.wait)),
        while: (error) => error._tag === "ClientError"
      }),
      Effect.catchTag("NameMismatch", (error) => Effect.fail(new Client.ClientError({ reason: "unexpected", message: error.message })))
    )
  }).pipe(Effect.withSpan("kern.web.running.reach"))
