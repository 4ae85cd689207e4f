import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, Ref, Scope, Stream, TestClock } from "effect"
import * as AgentHandle from "../../src/host/AgentHandle.js"
import type { LiveAgent } from "../../src/host/liveAgent.js"

const encoder = new TextEncoder()

/**
 * A handle whose live agent answers `/events` with an event stream that ends when `end` is completed, and anything
 * else at once; `closed` counts the times its scope was closed (passivations).
 */
const makeHandle = Effect.gen(function*() {
  const end = yield* Deferred.make<void>()
  const closed = yield* Ref.make(0)
  const builds = yield* Ref.make(0)
  const app = Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
    request.url === "/events"
      ? HttpServerResponse.stream(
        Stream.concat(Stream.make(encoder.encode("data: hello\n\n")), Stream.fromEffect(Deferred.await(end)).pipe(Stream.drain)),
        { contentType: "text/event-stream" }
      )
      : HttpServerResponse.text("ok"))
  const build = Effect.gen(function*() {
    yield* Ref.update(builds, (n) => n + 1)
    const scope = yield* Scope.make()
    yield* Scope.addFinalizer(scope, Ref.update(closed, (n) => n + 1))
    return { app: app as unknown as LiveAgent["app"], activity: { busy: Effect.succeed(false), keptLive: Option.none() }, scope } satisfies LiveAgent
  })
  const handle = yield* AgentHandle.make({
    name: "alpha",
    dir: "/nowhere",
    build: () => build,
    idleMs: 1000,
    report: () => Effect.void,
    changed: () => Effect.void
  })
  const request = (url: string) => HttpServerRequest.fromWeb(new Request(`http://127.0.0.1${url}`))
  return { handle, end, closed, builds, request }
})

describe("a hosted agent's handle", () => {
  // What an agent's app asks of the server it runs under (HttpServer's default services), as kern serve provides them.
  const served = Effect.provide(NodeHttpServer.layerContext)

  it.effect("an open event stream keeps the agent live; once it ends, the agent is passivated when idle", () =>
    served(Effect.gen(function*() {
      const { closed, end, handle, request } = yield* makeHandle
      const response = yield* handle.serve(request("/events"))
      if (response.body._tag !== "Stream") return expect.fail(`expected a streamed body, got ${response.body._tag}`)
      // The server reads the body as the client takes it: here, to its end.
      const reading = yield* Effect.fork(Stream.runCollect(response.body.stream))
      yield* TestClock.adjust("5 seconds")
      expect(yield* handle.passivateIfIdle).toBe(false)
      expect((yield* handle.info).state).toBe("live")
      expect(yield* Ref.get(closed)).toBe(0)

      yield* Deferred.succeed(end, undefined)
      expect(new TextDecoder().decode([...(yield* Fiber.join(reading))][0])).toBe("data: hello\n\n")
      // Idle time runs from the stream's end.
      expect(yield* handle.passivateIfIdle).toBe(false)
      yield* TestClock.adjust("2 seconds")
      expect(yield* handle.passivateIfIdle).toBe(true)
      expect((yield* handle.info).state).toBe("passive")
      expect(yield* Ref.get(closed)).toBe(1)
    })))

  it.effect("a stream its client left (interrupted unread) no longer keeps the agent live", () =>
    served(Effect.gen(function*() {
      const { closed, handle, request } = yield* makeHandle
      const response = yield* handle.serve(request("/events"))
      if (response.body._tag !== "Stream") return expect.fail("expected a streamed body")
      const reading = yield* Effect.fork(Stream.runDrain(response.body.stream))
      yield* TestClock.adjust("5 seconds")
      expect(yield* handle.passivateIfIdle).toBe(false)
      yield* Fiber.interrupt(reading)
      yield* TestClock.adjust("2 seconds")
      expect(yield* handle.passivateIfIdle).toBe(true)
      expect(yield* Ref.get(closed)).toBe(1)
    })))

  it.effect("a plain answer is counted off when made: the agent is passivated after idleMs, and woken again by the next request", () =>
    served(Effect.gen(function*() {
      const { builds, closed, handle, request } = yield* makeHandle
      const response = yield* handle.serve(request("/status"))
      expect(response.status).toBe(200)
      yield* TestClock.adjust("500 millis")
      expect(yield* handle.passivateIfIdle).toBe(false)
      yield* TestClock.adjust("600 millis")
      expect(yield* handle.passivateIfIdle).toBe(true)
      expect(yield* Ref.get(closed)).toBe(1)
      yield* handle.serve(request("/status"))
      expect(yield* Ref.get(builds)).toBe(2)
      expect((yield* handle.info).state).toBe("live")
    })))
})
