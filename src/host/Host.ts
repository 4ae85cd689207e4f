import { FileSystem, HttpServer, type HttpServerRequest } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Clock, Context, Deferred, Duration, Effect, Either, Layer, Option, Stream } from "effect"
import * as NodeHttp from "node:http"
import * as NodePath from "node:path"
import { blockedPortWarning, browserBlocked } from "../channels/web/blockedPorts.js"
import { agentToken as tokenOf, baseUrl, exposedWarning, isLoopback, ServerSetupError } from "../channels/web/serverSetup.js"
import { loadConfig } from "../config/AgentConfig.js"
import { ProcessEnv } from "../config/ProcessEnv.js"
import * as LockFile from "../storage/LockFile.js"
import type { Report } from "../runtime/layers.js"
import { HostAgents, make as makeHostAgents } from "./HostAgents.js"
import { HostConfigError, type HostSettings, parseHostConfig } from "./HostConfig.js"
import { HostAgentError } from "./AgentHandle.js"
import { forward, forwardedHeader } from "./forward.js"
import type { RunnerPlace } from "./hostCluster.js"
import * as HostDebug from "./hostDebug.js"
import { hostFiles, hostToken, readHostEnv } from "./hostHome.js"
import { makeHostApp } from "./HostServer.js"
import * as WakeSources from "./wakeSources/wakeSources.js"
import type { AgentLogging } from "./liveAgent.js"

export interface HostOptions {
  readonly settings: HostSettings
  /** Where `.kern-host/` is (token, lock). */
  readonly home: string
  /** host.json, watched: agents added or removed there are added or stopped without touching the others. */
  readonly configFile?: string | undefined
  readonly report: Report
  /** Where the host page's files are (host.html, assets/): the bundle's or the repo's dist/web by default. */
  readonly webRoot?: string | undefined
  /**
   * The environment host.json's `database.url` may reference (`${NAME}`), after the host's `.kern-host/.env`; the CLI
   * passes the process's.
   */
  readonly env?: Readonly<Record<string, string>> | undefined
  /** How each hosted agent's lines are logged (the host's log, with the agent's secrets redacted); as they come by default. */
  readonly logging?: AgentLogging | undefined
}

/** The host's one app: every agent's, the host page's and the host's own routes (HostServer.ts). */
type HostApp = Effect.Effect.Success<ReturnType<typeof makeHostApp>>

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

/** The registry as the rest of the host sees it among several runners: an agent is woken on the runner that holds it. */
const clusteredAgents = (local: HostAgents["Type"], runner: RunnerPlace): HostAgents["Type"] =>
  HostAgents.of({
    ...local,
    wake: (name, reason) =>
      Effect.flatMap(local.handle(name), Option.match({
        onNone: () => local.wake(name, reason),
        onSome: () =>
          Effect.flatMap(runner.locate(name, reason), (found) =>
            found.problem === undefined
              ? Effect.void
              : Effect.fail(new HostAgentError({ name, reason: "unavailable", message: `agent ${name} could not start: ${found.problem}` })))
      }))
  })

/**
 * A request for an agent this runner does not hold: the cluster says which runner does (placing the agent if none
 * does); served here if that is this runner now, else proxied there (forward.ts). A request already forwarded once is
 * not passed on again: the agent is moving, and the client is told to retry.
 */
const elsewhere = (local: HostAgents["Type"], runner: RunnerPlace) =>
(name: string, target: string, request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const moving = new HostAgentError({ name, reason: "unavailable", message: `agent ${name} is moving between runners; try again shortly` })
    if (request.headers[forwardedHeader] !== undefined) return yield* moving
    const found = yield* runner.locate(name, `${request.method} ${target.split("?")[0]}`)
    if (found.problem !== undefined) {
      return yield* new HostAgentError({ name, reason: "unavailable", message: `agent ${name} could not start: ${found.problem}` })
    }
    if (found.url !== runner.url) return yield* forward(found.url, request)
    const handle = yield* local.handle(name)
    if (Option.isNone(handle)) return yield* moving
    return yield* handle.value.serve(request.modify({ url: target })).pipe(
      Effect.catchTag("HostAgentError", (error) => Effect.fail(error.reason === "elsewhere" ? moving : error))
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
    if (browserBlocked(settings.port)) yield* report(`warning: ${blockedPortWarning(settings.port, `--port, or "port" in host.json`)}`)
    const server = NodeHttp.createServer()
    yield* Effect.addFinalizer(() => Effect.sync(() => server.closeAllConnections()))
    const listening = yield* Layer.build(NodeHttpServer.layer(() => server, { host: settings.host, port: settings.port })).pipe(
      Effect.mapError((error) => new ServerSetupError({ message: `could not listen on ${settings.host}:${settings.port}: ${error.message}` }))
    )
    const http = Context.get(listening, HttpServer.HttpServer)
    // Served from the moment it listens: the lock records the address, and each agent's token is written, well before
    // the host's app is made (the registry, the wake sources, the cluster). A request in between waits for the app;
    // with no handler yet, Node would have held it unanswered for good (a client that read the address early hung).
    const ready = yield* Deferred.make<HostApp>()
    yield* http.serve(Effect.flatten(Deferred.await(ready))).pipe(Effect.provide(listening))
    const port = http.address._tag === "TcpAddress" ? http.address.port : settings.port
    const hostUrl = baseUrl({ host: settings.host, port })
    yield* LockFile.acquire(files.lockFile, yield* LockFile.currentHolder("kern serve", hostUrl), { wait: Duration.zero, poll: Duration.millis(200) }).pipe(
      Effect.catchTag("LockBusy", (busy) =>
        Effect.fail(new HostConfigError({
          message: `another kern serve (pid ${Option.match(busy.holder, { onNone: () => "?", onSome: (h) => String(h.pid) })}) runs from ${options.home}: stop it first, or use --home`
        })))
    )
    // One runner among several (host.json's `database` and `cluster`): the cluster's code is loaded only then.
    const clustered = settings.cluster === undefined
      ? undefined
      : { cluster: settings.cluster, module: yield* Effect.promise(() => import("./hostCluster.js")) }
    const place = clustered === undefined
      ? undefined
      : yield* clustered.module.runnerPlace(clustered.cluster, { host: settings.host, port }, { ...(options.env ?? {}), ...(yield* readHostEnv(files)) })
    const local = yield* makeHostAgents({
      idleSeconds: settings.idleSeconds,
      home: files.home,
      clustered: place !== undefined,
      live: { host: settings.host, port, hostUrl, report, cluster: place?.lock, logging: options.logging }
    })
    yield* local.reconcile(settings.agents)
    const runner = clustered === undefined || place === undefined
      ? undefined
      : yield* clustered.module.joinCluster({ cluster: clustered.cluster, place, agents: local, report })
    const agents = runner === undefined ? local : clusteredAgents(local, runner)
    // What wakes a passive agent besides a request: its due times and its Telegram bot, watched by a few host fibers.
    // Built after the registry, so stopped before it: the agents' removal at the end wakes nothing. The folders are read
    // on the host's FileSystem and environment, as the agents' config is; Telegram over undici, as the agents' channels
    // reach it (a getUpdates carries no body to redact). Among runners, a wake goes through the cluster: the agent
    // wakes where it is held.
    const wakes = yield* Layer.build(WakeSources.layer.pipe(
      Layer.provide(Layer.succeed(HostAgents, agents)),
      Layer.provide(runner === undefined ? Layer.empty : Layer.succeed(WakeSources.RunnerShards, { holdsHere: runner.holdsHere })),
      Layer.provide(NodeHttpClient.layerUndici)
    ))
    const context = yield* Effect.context<FileSystem.FileSystem | ProcessEnv>()
    const agentToken = (dir: string) =>
      Effect.flatMap(loadConfig(dir), (loaded) =>
        loaded.fileExists ? tokenOf(loaded) : Effect.fail({ message: `${dir} is not an agent folder (kern init makes one)` })).pipe(
          Effect.mapError((error) => ({ message: error.message })),
          Effect.provide(context)
        )
    const debug = (yield* ProcessEnv)[HostDebug.debugVariable] === "1" ? yield* HostDebug.make : undefined
    const app = yield* makeHostApp({
      host: settings.host,
      port,
      token,
      agentToken,
      webRoot: options.webRoot,
      startedAtMs: yield* Clock.currentTimeMillis,
      elsewhere: runner === undefined ? undefined : elsewhere(local, runner),
      debug
    }).pipe(
      Effect.provideService(HostAgents, agents),
      Effect.provide(wakes)
    )
    yield* Deferred.succeed(ready, app)
    if (options.configFile !== undefined) yield* Effect.forkScoped(follow(options.configFile, report).pipe(Effect.provideService(HostAgents, agents)))
    yield* Effect.logInfo(`kern serve: ${settings.agents.length} agents on ${hostUrl} (pid ${process.pid})`)
    return { hostUrl, agents } as const
  })
