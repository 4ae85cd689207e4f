import { Data, Duration, Effect, Either, Option, Ref, Schedule } from "effect"
import type { LoadedConfig } from "../../config/AgentConfig.js"
import * as HostedMark from "../../storage/HostedMark.js"
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
  /**
   * Served by the `kern serve` that hosts the folder (`pid` is the host's), its agent asleep: a request wakes it. Not
   * set for a hosted agent that is awake: it holds the folder's lock with its address, as any runtime does.
   */
  readonly hosted?: { readonly name: string; readonly home: string } | undefined
}

export interface LocateOptions {
  /** Also a hosted agent that sleeps (src/storage/HostedMark.ts): at its host's address, where a request wakes it. */
  readonly hosted?: boolean | undefined
}

/** The address of the folder's agent on the `kern serve` that hosts it, when that host runs. */
export const locateHosted = (loaded: LoadedConfig) =>
  Effect.map(HostedMark.hostOf(loaded.paths.kernDir), (found) =>
    Option.flatMap(found, (host) =>
      Option.map(HostedMark.agentAddress(host), (address): AgentAddress => ({
        pid: Option.match(host.holder, { onNone: () => 0, onSome: (h) => h.pid }),
        address,
        recorded: true,
        hosted: { name: host.mark.name, home: host.mark.home }
      }))))

/**
 * Where the agent of a folder runs, by what it recorded: the address in the lock of its live holder; while `kern start`
 * launches it and it has not taken the lock yet, the address in agent.pid (when that pid is still the process kern
 * start launched). A holder that recorded none (an older kern, an embedding app) is looked for on the config's
 * port. With `hosted`, a folder nothing runs but a running `kern serve` hosts is found at that host. None when
 * nothing runs the folder.
 */
export const locate = (loaded: LoadedConfig, options: LocateOptions = {}) =>
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
    const found = Option.isSome(record) ? yield* PidFile.check(record.value) : undefined
    if (found?._tag === "Running" && found.holder.address !== undefined) {
      return Option.some<AgentAddress>({ pid: found.holder.pid, address: found.holder.address, recorded: true })
    }
    return options.hosted === true ? yield* locateHosted(loaded) : Option.none<AgentAddress>()
  }).pipe(Effect.withSpan("kern.web.running.locate"))

/** A client of the agent there; one that wakes a hosted agent gives /health `wake` to answer. */
const clientOf = (loaded: LoadedConfig, where: AgentAddress, wake?: Duration.DurationInput) => {
  const token = loaded.env.KERN_AUTH_TOKEN
  return token === undefined || token === ""
    ? Effect.succeed(Option.none<Client.AgentClient>())
    : Effect.map(Client.make({ baseUrl: where.address, token, healthTimeout: where.hosted === undefined ? undefined : wake }), Option.some)
}

/** How long a client that wakes a hosted agent gives it by default: building its layers (kern.db, channels, MCP). */
export const wakeTimeout = Duration.seconds(60)

/** The agent's answer to /health, when it answers as this folder's agent (its name). */
const healthOf = (loaded: LoadedConfig, client: Client.AgentClient) =>
  Effect.map(Effect.option(client.health), Option.filter((health) => health.name === loaded.config.name))

/**
 * The running agent of a folder, when one answers where it recorded it listens, as that agent (its name); none when
 * it does not run or does not answer now. Whatever runs it (`kern start`, or `kern run` in another terminal),
 * clients talk to it over HTTP. With `wake`, a hosted agent asleep is woken through its host (and given that long).
 */
export const findRunning = (loaded: LoadedConfig, options: { readonly wake?: Duration.DurationInput | undefined } = {}) =>
  Effect.gen(function*() {
    const where = yield* locate(loaded, { hosted: options.wake !== undefined })
    if (Option.isNone(where)) return Option.none()
    const client = yield* clientOf(loaded, where.value, options.wake)
    if (Option.isNone(client)) return Option.none()
    const health = yield* healthOf(loaded, client.value)
    return Option.map(health, (health) => ({ client: client.value, health }))
  })

class WakeRefused extends Data.TaggedError("WakeRefused")<{ readonly message: string }> {}

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
 * never taken as a sign to run the turn here, which would only race the agent for the folder. A hosted agent asleep
 * is woken through its running `kern serve` (the first request wakes it), never run here beside the host. None when
 * no agent serves the folder; a ClientError when it runs and did not answer within `wait`, or its host could not
 * wake it (what the host said).
 */
export const reachRunning = (loaded: LoadedConfig, options: ReachOptions) =>
  Effect.gen(function*() {
    const told = yield* Ref.make(false)
    const attempt = Effect.gen(function*() {
      const where = yield* locate(loaded, { hosted: true })
      if (Option.isNone(where)) return Option.none()
      const client = yield* clientOf(loaded, where.value, wakeTimeout)
      if (Option.isNone(client)) return Option.none()
      const hosted = where.value.hosted
      const answer = yield* Effect.either(client.value.health)
      if (hosted !== undefined && Either.isLeft(answer) && answer.left.reason === "refused") {
        // The host answered for the agent and could not wake it (its folder held, its config broken): waiting will not help.
        return yield* Effect.fail(new WakeRefused({
          message: `kern serve (pid ${where.value.pid}, ${where.value.address}) could not wake ${hosted.name}: ${answer.left.message}`
        }))
      }
      const health = Either.getRight(answer)
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
      Effect.catchTag("NameMismatch", (error) => Effect.fail(new Client.ClientError({ reason: "unexpected", message: error.message }))),
      Effect.catchTag("WakeRefused", (error) => Effect.fail(new Client.ClientError({ reason: "refused", message: error.message })))
    )
  }).pipe(Effect.withSpan("kern.web.running.reach"))
