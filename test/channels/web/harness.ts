import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Context, Effect, Layer } from "effect"
import * as NodePath from "node:path"
import { AgentRuntime } from "../../../src/runtime/AgentRuntime.js"
import { Channels } from "../../../src/tools/Channels.js"
import * as Layers from "../../../src/runtime/layers.js"
import * as Client from "../../../src/channels/web/client.js"
import * as WebServer from "../../../src/channels/web/WebServer.js"
import { ProcessEnv } from "../../../src/config/ProcessEnv.js"
import { freePort } from "../../support/freePort.js"
import { type FakeServerOptions, makeWith as makeFakeServerWith } from "../../support/fakeModelServer.js"
import { writeSessionFixture } from "../../support/sessionFixture.js"
import { makeTempDir, writeFiles } from "../../support/tempDir.js"

export const token = "test-token-0123456789abcdef"

export interface ServerOptions {
  readonly host?: string
  /** The port to listen on; a free one otherwise. */
  readonly port?: number
  /** Where the server's notices go (the non-loopback warning). */
  readonly report?: (line: string) => Effect.Effect<void>
  readonly ticketTtlMs?: number
  readonly bodyLimitBytes?: number
  readonly corsOrigins?: ReadonlyArray<string>
  readonly webRoot?: string
  readonly config?: Record<string, unknown>
  readonly model?: FakeServerOptions
  /** Messages of a session written before the agent starts (the fixture conversation), so it continues that one. */
  readonly sessionMessages?: number
  /** Files written into the agent folder before it starts (`.kern/.env`, an old session), by relative path. */
  readonly files?: Readonly<Record<string, string>>
  /** An agent folder to serve again (a restart); a new one otherwise. */
  readonly dir?: string
  /** Records the server's address in the folder's lock, as `kern run` and `kern start` do, for clients to find it. */
  readonly recordAddress?: boolean
}

/**
 * A real agent (kern.db, sessions, the kernel) on a fake model, serving its queue, with the HTTP API on a free
 * loopback port: built in the caller's scope.
 */
export const startServer = (options: ServerOptions = {}) =>
  Effect.gen(function*() {
    const model = yield* makeFakeServerWith(options.model ?? {})
    const dir = options.dir ?? NodePath.join(makeTempDir(), "agent")
    writeFiles(dir, {
      ".kern/config.json": JSON.stringify({ model: "m", baseURL: model.baseURL, heartbeatInterval: 0, autoCommit: false, ...options.config })
    })
    if (options.sessionMessages !== undefined) writeSessionFixture(dir, options.sessionMessages)
    if (options.files !== undefined) writeFiles(dir, options.files)
    const port = options.port ?? (yield* freePort)
    const server = WebServer.layer({
      host: options.host ?? "127.0.0.1",
      port,
      report: options.report,
      token,
      corsOrigins: options.corsOrigins ?? [],
      command: "kern test",
      ticketTtlMs: options.ticketTtlMs,
      bodyLimitBytes: options.bodyLimitBytes,
      webRoot: options.webRoot ?? makeTempDir("kern-web-")
    })
    // The server is attached before the agent serves a turn (runningAgentLayerWith), as `kern run` does.
    const address = options.recordAddress === true ? `http://127.0.0.1:${port}` : undefined
    const layer = Layers.runningAgentLayerWith(dir, { command: "kern test", waitSeconds: 0, address }, server).pipe(
      Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })),
      Layer.provide(NodeContext.layer)
    )
    const context = yield* Layer.build(layer)
    const runtime = Context.get(context, AgentRuntime)
    const channels = Context.get(context, Channels)
    const base = `http://127.0.0.1:${port}`
    // The client's HTTP agent lives as long as the test's scope.
    const http = yield* Layer.build(NodeHttpClient.layerUndici)
    const client = yield* Client.make({ baseUrl: base, token }).pipe(Effect.provide(http))
    return { model, dir, base, port, runtime, client, channels, context }
  })

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: unknown
}

/** One request with fetch (redirects not followed), its body read whole. */
export const request = (url: string, init: RequestInit = {}) =>
  Effect.promise(async (): Promise<Answer> => {
    const response = await fetch(url, { redirect: "manual", ...init })
    const text = await response.text()
    let json: unknown = undefined
    if ((response.headers.get("content-type") ?? "").includes("application/json")) json = JSON.parse(text)
    return { status: response.status, headers: response.headers, text, json }
  })

export const bearer = { authorization: `Bearer ${token}` }
