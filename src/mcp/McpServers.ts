import { FileSystem } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Context, Deferred, Duration, Effect, Layer, Option, Queue, Ref } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import { KnownSecrets } from "../config/KnownSecrets.js"
import { isStdio, type McpServerConfig } from "../config/mcpServers.js"
import { redactSecretsInText } from "../kernel/secretGuard.js"
import { keptSpanOf } from "../kernel/keptSpan.js"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import { ToolRegistry } from "../kernel/ToolRegistry.js"
import { type Connection, connect, newStderrBuffer } from "./connection.js"
import { CallSignal } from "./callSignal.js"
import { McpFailure } from "./McpFailure.js"
import type { McpServerState } from "./McpServerState.js"
import { syncServerTools } from "./registerTools.js"
import { syncResourceTool } from "./resourceTool.js"
import { requestFailure, resultText, toolErrorFailure } from "./results.js"
import { loadCachedTools, saveCachedTools } from "./toolCache.js"
import { registerToolSearch } from "./toolSearch.js"
import type { SdkClient } from "./sdk.js"
import { allowedTools, type McpTool } from "./toolSpecs.js"

/** What a call of an MCP tool returns to the kernel: the result as text. */
export interface McpCallOptions {
  readonly timeoutMs: number
}

export interface McpServersShape {
  /** Every configured server's state, in config order. */
  readonly states: Effect.Effect<ReadonlyArray<McpServerState>>
  /** Starts a `first-use` server (a no-op for one already started) and waits for its first attempt to end. */
  readonly ensure: (server: string) => Effect.Effect<void, McpFailure>
  /** Waits until every server started with the agent has connected or failed once. */
  readonly ready: Effect.Effect<void>
  /** A connected server's SDK client (started first if it starts at first use): for resources and prompts. */
  readonly client: (server: string) => Effect.Effect<SdkClient, McpFailure>
  /** A connected server's tools as it listed them. */
  readonly tools: (server: string) => Effect.Effect<ReadonlyArray<McpTool>, McpFailure>
  /** Calls a tool: its result as text, or a ToolFailure with the kernel's code. */
  readonly call: (
    server: string,
    tool: string,
    args: Readonly<Record<string, unknown>>,
    options: McpCallOptions
  ) => Effect.Effect<string, ToolFailure>
}

export class McpServers extends Context.Tag("kern/mcp/McpServers")<McpServers, McpServersShape>() {}

interface ServerSlot {
  readonly name: string
  readonly config: McpServerConfig
  readonly state: Ref.Ref<McpServerState>
  /**
   * The live connection, set and cleared by the fiber that connects (connectOnce): a field, not a Ref, so a call
   * reads it in the step that starts its request (keptSpanOf), with no Effect step of its own.
   */
  connection: Option.Option<Connection>
  /** Completed when the first connection attempt has ended, either way. */
  readonly firstAttempt: Deferred.Deferred<void>
  /** Whether the supervisor has been forked. */
  readonly started: Ref.Ref<boolean>
  /** The tools it offered last (listed at connection, again on each list_changed). */
  readonly tools: Ref.Ref<ReadonlyArray<McpTool>>
}

/** What a call does with the progress its tool reports: nothing (a call's time is `timeoutMs` whatever it reports). */
const ignoreProgress = (): void => undefined

/** Between restarts: 0.5 s doubling to 30 s; a server that stayed connected starts over at 0.5 s. */
const backoff = (failures: number) => Duration.millis(Math.min(30_000, 500 * 2 ** Math.min(failures, 6)))

const tailLines = 12

const transportOf = (config: McpServerConfig): McpServerState["transport"] => (isStdio(config) ? "stdio" : "http")

export const make = Effect.gen(function*() {
  const { config, env, paths } = yield* AgentConfig
  const { secrets } = yield* KnownSecrets
  const fs = yield* FileSystem.FileSystem
  const scope = yield* Effect.scope
  const root = yield* fs.realPath(paths.dir).pipe(Effect.orElseSucceed(() => paths.dir))
  const registry = yield* ToolRegistry
  const sql = yield* SqlClient.SqlClient
  const redact = (text: string) => redactSecretsInText(text, secrets)

  const slots = new Map<string, ServerSlot>()
  for (const [name, server] of Object.entries(config.mcpServers)) {
    slots.set(name, {
      name,
      config: server,
      state: yield* Ref.make<McpServerState>({
        name,
        transport: transportOf(server),
        state: server.enabled ? "idle" : "disabled",
        tools: 0,
        connections: 0
      }),
      connection: Option.none<Connection>(),
      firstAttempt: yield* Deferred.make<void>(),
      started: yield* Ref.make(false),
      tools: yield* Ref.make<ReadonlyArray<McpTool>>([])
    })
  }

  const stderrTail = (text: string) => {
    const lines = redact(text).trimEnd().split("\n")
    const tail = lines.slice(-tailLines).join("\n")
    return tail === "" ? {} : { stderrTail: tail }
  }

  const register = (slot: ServerSlot, tools: ReadonlyArray<McpTool>) =>
    syncServerTools(registry, slot.name, slot.config, tools, (tool, args, options) => call(slot.name, tool, args, options))

  /** The registry, the slot and kern.db's cache hold the tools the server offers now. */
  const syncTools = (slot: ServerSlot, tools: ReadonlyArray<McpTool>) =>
    Effect.gen(function*() {
      yield* register(slot, tools)
      yield* Ref.set(slot.tools, tools)
      yield* saveCachedTools(slot.name, tools).pipe(
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.catchAll((error) => Effect.logWarning(`kern: the tool list of MCP server "${slot.name}" was not cached: ${error.message}`))
      )
      yield* Ref.update(slot.state, (state) => ({
        name: slot.name,
        transport: state.transport,
        state: "connected" as const,
        tools: allowedTools(slot.config, tools).length,
        connections: state.connections
      }))
    })

  /** Lists the tools anew each time the server says they changed, for as long as the connection lasts. */
  const followToolList = (slot: ServerSlot, connection: Connection) =>
    Effect.forever(Effect.gen(function*() {
      yield* Queue.take(connection.toolsChanged)
      yield* connection.listTools.pipe(
        Effect.flatMap((tools) => syncTools(slot, tools)),
        Effect.catchAll((failure) => Effect.logWarning(`kern: ${failure.message}; keeping its earlier tools`)),
        Effect.withSpan("kern.mcp.toolsChanged", { attributes: { server: slot.name } })
      )
    }))

  /** The connected servers that offer resources. */
  const offeringResources = Effect.sync(() =>
    [...slots.values()].filter((slot) =>
      Option.isSome(slot.connection) && slot.connection.value.client.getServerCapabilities()?.resources !== undefined
    ).map((slot) => slot.name)
  )
  const resourceLock = yield* Effect.makeSemaphore(1)
  const syncResources: Effect.Effect<void> = resourceLock.withPermits(1)(
    syncResourceTool(registry, {
      servers: offeringResources,
      client: (server): Effect.Effect<SdkClient, McpFailure> => Effect.map(connectionOf(server), (c) => c.client)
    })
  )

  /** One connection, from connecting to its end; the reason it ended. */
  const connectOnce = (slot: ServerSlot) =>
    Effect.scoped(Effect.gen(function*() {
      const stderr = newStderrBuffer()
      yield* Ref.update(slot.state, (state) => ({ ...state, state: "starting" as const }))
      const connected = yield* connect({
        name: slot.name,
        config: slot.config,
        env,
        root,
        stderr,
        connectTimeoutMs: Math.max(slot.config.timeoutMs, 10_000)
      }).pipe(Effect.either)
      if (connected._tag === "Left") {
        return { connected: false, reason: redact(connected.left.detail), ...stderrTail(stderr.text()) }
      }
      const connection = connected.right
      yield* syncTools(slot, connection.tools)
      slot.connection = Option.some(connection)
      yield* Ref.update(slot.state, (state) => ({ ...state, transport: connection.transport, connections: state.connections + 1 }))
      yield* Effect.forkScoped(followToolList(slot, connection))
      yield* syncResources
      yield* Deferred.succeed(slot.firstAttempt, undefined)
      const reason = yield* Deferred.await(connection.closed)
      slot.connection = Option.none()
      yield* syncResources
      return { connected: true, reason, ...stderrTail(stderr.text()) }
    }))

  /** Connects, and reconnects with backoff whenever the connection ends, for as long as the agent runs. */
  const supervise = (slot: ServerSlot) =>
    Effect.gen(function*() {
      let failures = 0
      while (true) {
        const ended = yield* connectOnce(slot)
        failures = ended.connected ? 0 : failures + 1
        const wait = backoff(failures)
        yield* Ref.update(slot.state, (state) => ({
          ...state,
          state: "failed" as const,
          reason: `${ended.reason}; retrying in ${Duration.format(wait)}`,
          ...("stderrTail" in ended ? { stderrTail: ended.stderrTail } : {})
        }))
        yield* Deferred.succeed(slot.firstAttempt, undefined)
        yield* Effect.logWarning(`kern: MCP server "${slot.name}" ${ended.connected ? "closed" : "failed"}: ${ended.reason}`)
        yield* Effect.sleep(wait)
      }
    }).pipe(Effect.withSpan("kern.mcp.supervise", { attributes: { server: slot.name } }))

  const start = (slot: ServerSlot) =>
    Effect.flatMap(Ref.getAndSet(slot.started, true), (started) =>
      started ? Effect.void : Effect.asVoid(Effect.forkIn(supervise(slot), scope)))

  const slotOf = (server: string) =>
    Option.match(Option.fromNullable(slots.get(server)), {
      onNone: () =>
        Effect.fail(new McpFailure({
          server,
          reason: "unknown-server",
          detail: `no such server in mcpServers (configured: ${[...slots.keys()].join(", ") || "none"})`
        })),
      onSome: (slot) =>
        slot.config.enabled
          ? Effect.succeed(slot)
          : Effect.fail(new McpFailure({ server, reason: "disabled", detail: "disabled in the config (\"enabled\": false)" }))
    })

  const ensure = (server: string) =>
    Effect.gen(function*() {
      const slot = yield* slotOf(server)
      yield* start(slot)
      yield* Deferred.await(slot.firstAttempt)
      return slot
    })

  const connectionOf = (server: string): Effect.Effect<Connection, McpFailure> =>
    Effect.gen(function*() {
      const slot = yield* ensure(server)
      const connection = slot.connection
      if (Option.isSome(connection)) return connection.value
      const state = yield* Ref.get(slot.state)
      return yield* new McpFailure({
        server,
        reason: "not-connected",
        detail: `not connected (${state.state}${state.reason === undefined ? "" : `: ${state.reason}`})`
      })
    })

  /**
   * One request to a connected server, in one Effect.async: its own signal (callSignal.ts) cancels the request (the SDK
   * sends notifications/cancelled) when the call is interrupted (a stopped turn), and the result is mapped where the
   * promise settles. `timeoutMs` is the call's whole time (the kernel runs this self-timed, with no timer of its
   * own): the SDK's timer cancels the request as the abort does and fails it with RequestTimeout (a TIMEOUT).
   * Progress is asked for, so a long tool reports it as it would to any client, but it does not extend that time.
   */
  const request = (
    connection: Connection,
    server: string,
    tool: string,
    args: Readonly<Record<string, unknown>>,
    options: McpCallOptions
  ): Effect.Effect<string, ToolFailure> =>
    Effect.async<string, ToolFailure>((resume) => {
      const controller = new CallSignal()
      connection.client.callTool({ name: tool, arguments: { ...args } }, undefined, {
        signal: controller.signal,
        timeout: options.timeoutMs,
        onprogress: ignoreProgress
      }).then(
        (result) => {
          let ended: Effect.Effect<string, ToolFailure>
          try {
            ended = result.isError === true ? Effect.fail(toolErrorFailure(server, tool, result)) : Effect.succeed(resultText(result))
          } catch (error) {
            ended = Effect.die(error)
          }
          resume(ended)
        },
        (error: unknown) => resume(Effect.fail(requestFailure(server, tool, error)))
      )
      return Effect.sync(() => controller.abort())
    })

  const call = (
    server: string,
    tool: string,
    args: Readonly<Record<string, unknown>>,
    options: McpCallOptions
  ): Effect.Effect<string, ToolFailure> => {
    // Not connected yet (a first-use server starting, one waiting for its first attempt): the request's own timer
    // starts only once connected, so the wait for the connection and the request together are held to timeoutMs
    // here, as the kernel's timer would (the call is self-timed: ToolRegistration.selfTimed). Made only then.
    const viaConnectionOf = () => Effect.flatMap(
      Effect.mapError(connectionOf(server), (failure) =>
        toolFailure(failure.reason === "not-connected" ? "NETWORK_ERROR" : "NOT_FOUND", failure.message)),
      (connection) => request(connection, server, tool, args, options)
    ).pipe(Effect.timeoutFail({
      duration: Duration.millis(options.timeoutMs),
      onTimeout: () =>
        toolFailure("TIMEOUT", `MCP server ${server} did not connect and answer ${tool} in time (${options.timeoutMs} ms)`)
    }))
    // An enabled server's live connection, read as the call runs; else whatever `connectionOf` says (starting a
    // first-use server, waiting for its first attempt, or why it is not connected). A span only where a tracer keeps
    // it (keptSpan.ts): one made for Effect's own tracer goes nowhere and costs about as much as the rest of the
    // call's own work.
    const slot = slots.get(server)
    return keptSpanOf("kern.mcp.call", { attributes: { server, tool } }, () =>
      slot !== undefined && slot.config.enabled && Option.isSome(slot.connection)
        ? request(slot.connection.value, server, tool, args, options)
        : viaConnectionOf())
  }

  // Only MCP tools are ever offered by name alone: tool_search exists where they do.
  if ([...slots.values()].some((slot) => slot.config.enabled)) {
    yield* registerToolSearch(registry).pipe(
      Effect.catchAll((error) => Effect.logWarning(`kern: tool_search is not offered: ${error.message}`))
    )
  }
  for (const slot of slots.values()) {
    if (slot.config.enabled && slot.config.start === "agent") yield* start(slot)
  }
  // A first-use server's tools as it listed them last are offered before it runs: a call to one starts it, and its
  // live list then replaces them. Never listed yet, its tools are unknown until it first starts.
  for (const slot of slots.values()) {
    if (!slot.config.enabled || slot.config.start !== "first-use") continue
    const cached = yield* loadCachedTools(slot.name).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    if (Option.isNone(cached)) continue
    yield* register(slot, cached.value)
    yield* Ref.update(slot.state, (state) =>
      state.state === "idle" ? { ...state, tools: allowedTools(slot.config, cached.value).length, toolsCached: true } : state)
  }

  return McpServers.of({
    states: Effect.forEach([...slots.values()], (slot) => Ref.get(slot.state)),
    ensure: (server) => Effect.asVoid(ensure(server)),
    ready: Effect.asVoid(Effect.forEach(
      [...slots.values()].filter((slot) => slot.config.enabled && slot.config.start === "agent"),
      (slot) => Deferred.await(slot.firstAttempt)
    )),
    client: (server) => Effect.map(connectionOf(server), (connection) => connection.client),
    tools: (server) => Effect.zipRight(connectionOf(server), Effect.flatMap(slotOf(server), (slot) => Ref.get(slot.tools))),
    call
  })
})

/** The agent's MCP servers: those started with the agent connect in the background as the layer is built. */
export const layer = Layer.scoped(McpServers, make)

/** The MCP servers, built once every server started with the agent has connected or failed: for one-shot commands. */
export const layerReady = Layer.tap(layer, (context) => Context.get(context, McpServers).ready)
