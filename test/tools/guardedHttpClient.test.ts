import { HttpClient, HttpClientRequest } from "@effect/platform"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodePath from "node:path"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { findAddressRefusal, GuardedHttpClient } from "../../src/tools/guardedHttpClient.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { testServer } from "./httpServer.js"
import { makeWorkspace, toolsLayer } from "./support.js"

const root = makeWorkspace()

/** A local server that counts its requests. */
const countingServer = Effect.gen(function*() {
  let hits = 0
  const { origin } = yield* testServer({
    "/ok": (_, res) => {
      hits++
      res.writeHead(200, { "content-type": "text/plain" }).end("local")
    }
  })
  return { origin, port: new URL(origin).port, hits: () => hits }
})

const get = (client: HttpClient.HttpClient, url: string) =>
  Effect.flatMap(client.execute(HttpClientRequest.get(url)), (response) => response.text)

describe("the tools' guarded HttpClient", () => {
  it.scoped("refuses IP literals the policy refuses before it connects (no name lookup guards them)", () =>
    Effect.gen(function*() {
      const server = yield* countingServer
      const client = yield* GuardedHttpClient.pipe(Effect.provide(toolsLayer(root, {}, { memoryDb: true })))
      for (const host of ["127.0.0.1", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "0.0.0.0"]) {
        const error = yield* Effect.flip(get(client, `http://${host}:${server.port}/ok`))
        assert.include(findAddressRefusal(error)?.message, "refusing to fetch", host)
      }
      assert.strictEqual(server.hits(), 0)
    }))

  it.scoped("reaches loopback when the workspace allows private hosts", () =>
    Effect.gen(function*() {
      const server = yield* countingServer
      const client = yield* GuardedHttpClient.pipe(
        Effect.provide(toolsLayer(root, { allowPrivateHosts: true }, { memoryDb: true }))
      )
      assert.strictEqual(yield* get(client, `${server.origin}/ok`), "local")
      assert.strictEqual(server.hits(), 1)
    }))
})

describe("the agent layer's ambient HttpClient is not the tools' guarded one", () => {
  /** The whole agent runtime over a fresh folder (its model is never called). */
  const agent = () => {
    const dir = NodePath.join(makeTempDir(), "agent")
    writeFiles(dir, {
      ".kern/config.json": JSON.stringify({ provider: "openrouter", model: "test-model", baseURL: "http://127.0.0.1:9/v1" })
    })
    return agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 }).pipe(
      Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })),
      Layer.provide(NodeContext.layer)
    )
  }

  it.scoped("a plain request from the agent layer reaches a local server by name (what a channel would do)", () =>
    Effect.gen(function*() {
      const server = yield* countingServer
      const ambient = yield* HttpClient.HttpClient
      assert.strictEqual(yield* get(ambient, `http://localhost:${server.port}/ok`), "local")
      assert.strictEqual(yield* get(ambient, `${server.origin}/ok`), "local")
      assert.strictEqual(server.hits(), 2)
    }).pipe(Effect.provide(agent())))

  it.scoped("while the tools' client of the same layer refuses the same server", () =>
    Effect.gen(function*() {
      const server = yield* countingServer
      const guarded = yield* GuardedHttpClient
      for (const url of [`http://localhost:${server.port}/ok`, `${server.origin}/ok`]) {
        const error = yield* Effect.flip(get(guarded, url))
        assert.isDefined(findAddressRefusal(error), url)
      }
      assert.strictEqual(server.hits(), 0)
    }).pipe(Effect.provide(agent())))
})
