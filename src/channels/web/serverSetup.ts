import { FileSystem } from "@effect/platform"
import { Effect, Random, Schema } from "effect"
import { parseJsonWith } from "../../config/json.js"
import * as NodeNet from "node:net"
import type { LoadedConfig } from "../../config/AgentConfig.js"
import { newSecret } from "./auth.js"
import { browserBlocked } from "./blockedPorts.js"
import { privateFileMode } from "../../storage/privateFiles.js"

/** Where a port is chosen when the config names none. */
export const portRange = { from: 4100, to: 4999 } as const

export class ServerSetupError extends Schema.TaggedError<ServerSetupError>()("ServerSetupError", {
  message: Schema.String
}) {}

/** What the server listens on and the token it accepts. */
export interface ServerSettings {
  readonly host: string
  readonly port: number
  readonly token: string
  readonly corsOrigins: ReadonlyArray<string>
}

const loopbackHosts: ReadonlySet<string> = new Set(["127.0.0.1", "localhost", "::1", "[::1]"])

export const isLoopback = (host: string): boolean => loopbackHosts.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host)

/** The notice for a server reachable from other machines. */
export const exposedWarning = (host: string): string =>
  `the HTTP API listens on ${host}, not on loopback: anyone who can reach this machine on the network can try the ` +
  "token and, with it, run tools as the operator; put it behind TLS and a firewall, or set \"host\": \"127.0.0.1\""

/** Whether a port is free on `host`: a listen that succeeds, closed at once. */
export const portFree = (host: string, port: number) =>
  Effect.async<boolean>((resume) => {
    const probe = NodeNet.createServer()
    probe.once("error", () => resume(Effect.succeed(false)))
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resume(Effect.succeed(true))))
  })

const ConfigObject = parseJsonWith(Schema.Record({ key: Schema.String, value: Schema.Unknown }))

/**
 * A free port from portRange, starting at a random one so agents started together do not race for the same; never one
 * browsers refuse (4190 is in the range).
 */
const choosePort = (host: string) =>
  Effect.gen(function*() {
    const size = portRange.to - portRange.from + 1
    const first = yield* Random.nextIntBetween(0, size)
    for (let i = 0; i < size; i++) {
      const port = portRange.from + ((first + i) % size)
      if (!browserBlocked(port) && (yield* portFree(host, port))) return port
    }
    return yield* new ServerSetupError({ message: `no free port from ${portRange.from} to ${portRange.to} on ${host}; set "port" in .kern/config.json` })
  })

const io = (what: string) => (error: { readonly message: string }) => new ServerSetupError({ message: `${what}: ${error.message}` })

/**
 * A bearer token kept in an env file (mode 0600): `current` when it is set, else a new one appended to `envFile` as
 * `variable`, with `comment` above it.
 */
export const keptToken = (envFile: string, current: string | undefined, variable: string, comment: string) =>
  Effect.gen(function*() {
    if (current !== undefined && current.trim() !== "") return current
    const fs = yield* FileSystem.FileSystem
    const token = newSecret()
    const exists = yield* fs.exists(envFile).pipe(Effect.mapError(io(`could not read ${envFile}`)))
    const before = exists ? yield* fs.readFileString(envFile).pipe(Effect.mapError(io(`could not read ${envFile}`))) : ""
    const separator = before === "" || before.endsWith("\n") ? "" : "\n"
    yield* fs.writeFileString(envFile, `${before}${separator}# ${comment}\n${variable}=${token}\n`, { mode: 0o600 }).pipe(
      Effect.zipRight(fs.chmod(envFile, 0o600)),
      Effect.mapError(io(`could not write ${envFile}`))
    )
    return token
  })

/** The agent's HTTP token (KERN_AUTH_TOKEN in `.kern/.env`), made once and kept. */
export const agentToken = (loaded: LoadedConfig) =>
  keptToken(loaded.paths.envFile, loaded.env.KERN_AUTH_TOKEN, "KERN_AUTH_TOKEN", "The HTTP API's bearer token (kern open logs a browser in with it).")

/**
 * The server's port and token, made once and kept: a port chosen from portRange is saved to `.kern/config.json`
 * (`KERN_PORT` overrides it), a token generated into `.kern/.env` (mode 0600) as KERN_AUTH_TOKEN. `kern start` runs
 * this before it spawns the agent, so it knows where to look; `kern run` too, for a first start in the foreground.
 */
export const prepareServer = (loaded: LoadedConfig) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const { config, paths } = loaded
    const token = yield* agentToken(loaded)
    let port = config.port
    if (port === undefined) {
      port = yield* choosePort(config.host)
      const text = yield* fs.readFileString(paths.configFile).pipe(Effect.mapError(io(`could not read ${paths.configFile}`)))
      const object = yield* Schema.decode(ConfigObject)(text).pipe(Effect.mapError(io(`could not save the port in ${paths.configFile}`)))
      yield* fs.writeFileString(paths.configFile, `${JSON.stringify({ ...object, port }, null, 2)}\n`, { mode: privateFileMode }).pipe(
        Effect.mapError(io(`could not save the port in ${paths.configFile}`))
      )
    }
    return { host: config.host, port, token, corsOrigins: config.corsOrigins } satisfies ServerSettings
  }).pipe(Effect.withSpan("kern.web.prepare"))

/** The address a client on this machine uses: the bound host, with a wildcard bind reached over loopback. */
export const clientHost = (host: string): string =>
  host === "0.0.0.0" || host === "::" || host === "[::]" ? "127.0.0.1" : host.includes(":") && !host.startsWith("[") ? `[${host}]` : host

export const baseUrl = (settings: { readonly host: string; readonly port: number }): string =>
  `http://${clientHost(settings.host)}:${settings.port}`
