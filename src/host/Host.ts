import { FileSystem, HttpServer } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Clock, Context, Duration, Effect, Either, Layer, Option, Stream } from "effect"
import * as NodeHttp from "node:http"
import * as NodePath from "node:path"
import { baseUrl, exposedWarning, isLoopback, ServerSetupError } from "../channels/web/serverSetup.js"
import * as LockFile from "../storage/LockFile.js"
import type { Report } from "../runtime/layers.js"
import { HostAgents, make as makeHostAgents } from "./HostAgents.js"
import { HostConfigError, type HostSettings, parseHostConfig } from "./HostConfig.js"
import { hostFiles, hostToken } from "./hostHome.js"
import { makeHostApp } from "./HostServer.js"
import type { AgentLogging } from "./liveAgent.js"

export interface HostOptions {
  readonly settings: HostSettings
  /** Where `.kern-host/` is (token, lock). */
  readonly home: string
  /** host.json, watched: agents added or removed there are added or stopped without touching the others. */
  readonly configFile?: string | undefined
  readonly report: Report
  /** How each hosted agent's lines are logged (the host's log, with the agent's secrets redacted); as they come by default. */
  readonly logging?: AgentLogging | undefined
}

/** Whether `file`'s folder changed in a way that may concern it (an editor's rename over it included). */
const changesOf = (file: string) =>
  Effect.map(FileSystem.FileSystem, (fs) =>
    fs.watch(NodePath.dirname(file)).pipe(
      Stream.filter((event) => NodePath.basename(event.path) === NodePath.basename(file)),
      Stream.debounce(Duration.millis(100))
    ))

/** Reads host.json again and makes the registry follow it; a file that does not decode is reported and ignored. */
const follow = (file: string, report: Report) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const agents = yield* HostAgents
    const changes = yield* changesOf(file)
    yield* changes.pipe(
      Stream.runForEach(() =>
        Effect.gen(function*() {
          const text = yield* fs.readFileString(file).pipe(Effect.either)
          if (Either.isLeft(text)) return yield* report(`could not read ${file}: ${text.left.message}; the agents stay as they were`)
          const parsed = parseHostConfig(text.right, NodePath.dirname(file))
          if (Either.isLeft(parsed)) return yield* report(`${file}: ${parsed.left.message}; the agents stay as they were`)
          yield* agents.reconcile(parsed.right.agents)
        })
      ),
      Effect.catchAll((error) => report(`stopped watching ${file}: ${error.message}`))
    )
  })

/**
 * `kern serve`: one HTTP server for many agent folders, each agent passive until a request (or `wake`) needs it.
 * Runs until interrupted; then every live agent is stopped as `kern stop` would stop it, the server closed, the
 * host's lock released.
 */
export const runHost = (options: HostOptions) =>
  Effect.gen(function*() {
    const { settings, report } = options
    const files = hostFiles(options.home)
    const token = yield* hostToken(files)
    if (!isLoopback(settings.host)) yield* report(`warning: ${exposedWarning(settings.host)}`)
    const server = NodeHttp.createServer()
    yield* Effect.addFinalizer(() => Effect.sync(() => server.closeAllConnections()))
    const listening = yield* Layer.build(NodeHttpServer.layer(() => server, { host: settings.host, port: settings.port })).pipe(
      Effect.mapError((error) => new ServerSetupError({ message: `could not listen on ${settings.host}:${settings.port}: ${error.message}` }))
    )
    const http = Context.get(listening, HttpServer.HttpServer)
    const port = http.address._tag === "TcpAddress" ? http.address.port : settings.port
    const hostUrl = baseUrl({ host: settings.host, port })
    yield* LockFile.acquire(files.lockFile, yield* LockFile.currentHolder("kern serve", hostUrl), { wait: Duration.zero, poll: Duration.millis(200) }).pipe(
      Effect.catchTag("LockBusy", (busy) =>
        Effect.fail(new HostConfigError({
          message: `another kern serve (pid ${Option.match(busy.holder, { onNone: () => "?", onSome: (h) => String(h.pid) })}) runs from ${options.home}: stop it first, or use --home`
        })))
    )
    const agents = yield* makeHostAgents({ idleSeconds: settings.idleSeconds, home: files.home, live: { host: settings.host, port, hostUrl, report, logging: options.logging } })
    yield* agents.reconcile(settings.agents)
    const app = yield* makeHostApp({ host: settings.host, token, startedAtMs: yield* Clock.currentTimeMillis }).pipe(Effect.provideService(HostAgents, agents))
    yield* http.serve(app).pipe(Effect.provide(listening))
    if (options.configFile !== undefined) yield* Effect.forkScoped(follow(options.configFile, report).pipe(Effect.provideService(HostAgents, agents)))
    yield* Effect.logInfo(`kern serve: ${settings.agents.length} agents on ${hostUrl} (pid ${process.pid})`)
    return { hostUrl, agents } as const
  })
