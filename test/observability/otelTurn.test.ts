import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Logger, PubSub, Queue, Scope, Stream } from "effect"
import * as NodePath from "node:path"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { AgentRuntime } from "../../src/runtime/AgentRuntime.js"
import { Approvals, localOperator } from "../../src/runtime/Approvals.js"
import * as Layers from "../../src/runtime/layers.js"
import type { TurnEvent } from "../../src/turn/TurnEvent.js"
import { downCollector, type FakeOtlp, fakeOtlp, isUnder, parentOf } from "../support/fakeOtlp.js"
import { FakeReply, type FakeModelServerShape, make as makeFakeServer } from "../support/fakeModelServer.js"
import type { OtlpSpan } from "../support/otlpWire.js"
import { testAgentDir } from "../support/testAgentDir.js"
import { eventually } from "../support/waitFor.js"

// OpenTelemetry export of a running agent (src/runtime/telemetry.ts, otelExport.ts) against a fake collector that
// decodes the real OTLP wire formats (test/support/fakeOtlp.ts): the span tree of a turn with tool calls and
// approvals, the attributes an operator asks about, nothing secret on the wire, a collector that is down.

const hold = { command: "kern test", waitSeconds: 10 }
/** A key kern holds (its provider key): it is redacted by name wherever it would leave. */
const providerKey = "sk-or-v1-known-provider-key-0123456789"
/** A credential kern does not know, shaped like a GitHub token: redacted by its shape. */
const shapedToken = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

const provided = <A, E>(layer: Layer.Layer<A, E, ProcessEnv | Layer.Layer.Success<typeof NodeContext.layer>>, env: Record<string, string>) =>
  layer.pipe(Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: providerKey, ...env })), Layer.provide(NodeContext.layer))

const agentDir = (server: FakeModelServerShape, config: Record<string, unknown>) =>
  testAgentDir({ baseURL: server.baseURL, ...config })

class Seen extends Context.Tag("test/Seen")<Seen, Queue.Dequeue<TurnEvent>>() {}
const seenLayer = Layer.scoped(Seen, Effect.flatMap(AgentRuntime, (runtime) => PubSub.subscribe(runtime.events)))

/** The running agent, in a scope of its own; `lines` collects what it logs. */
const start = (dir: string, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const lines: Array<{ readonly level: string; readonly message: string }> = []
    const capture = Logger.make(({ logLevel, message }) =>
      void lines.push({ level: logLevel.label, message: (Array.isArray(message) ? message : [message]).map(String).join(" ") }))
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(provided(Layers.runningAgentLayerWith(dir, hold, seenLayer), env), scope).pipe(
      Effect.provide(Logger.add(capture))
    )
    return {
      runtime: Context.get(context, AgentRuntime),
      approvals: Context.get(context, Approvals),
      seen: Context.get(context, Seen),
      lines,
      stop: Scope.close(scope, Exit.void)
    }
  })

const nextTurn = (seen: Queue.Dequeue<TurnEvent>) =>
  Effect.gen(function*() {
    const events: Array<TurnEvent> = []
    for (;;) {
      const event = yield* Queue.take(seen)
      events.push(event)
      if (event.type === "finish") return events
    }
  }).pipe(Effect.timeoutFail({ duration: "60 seconds", onTimeout: () => new Error("no turn finished") }))

const named = (spans: ReadonlyArray<OtlpSpan>, name: string) => spans.filter((span) => span.name === name)

/** Whether any body the collector received holds `value`, as it came over the wire. */
const sent = (collector: FakeOtlp, value: string) => collector.requests.some((request) => request.body.includes(value))

describe("OpenTelemetry export of a running agent", () => {
  it.scopedLive("a turn with an approved and a refused call: its span tree and attributes reach the collector over protobuf, nothing secret in them", () =>
    Effect.gen(function*() {
      const collector = yield* fakeOtlp
      const server = yield* makeFakeServer
      const dir = agentDir(server, { approvalMode: "ask", otel: { endpoint: collector.origin, serviceName: "kern-otel-test" } })
      const agent = yield* start(dir)
      // The operator approves the first call and refuses the second.
      const asked = yield* PubSub.subscribe(agent.approvals.requests)
      const answering = yield* Effect.fork(Stream.fromQueue(asked).pipe(
        Stream.take(2),
        Stream.zipWithIndex,
        Stream.runForEach(([pending, i]) => agent.approvals.decide(pending.id, i === 0, localOperator("cli")))
      ))
      yield* server.reply(
        FakeReply.toolCalls([{ id: "c1", name: "bash", args: { command: `echo ${shapedToken} ${providerKey.slice(0, 4)}` } }], { usage: { input: 100, output: 10 } }),
        FakeReply.toolCalls([{ id: "c2", name: "bash", args: { command: "rm -rf build" } }], { usage: { input: 120, output: 11 } }),
        FakeReply.text("done", { usage: { input: 140, output: 12 } })
      )
      const submitted = yield* agent.runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "clean up" })
      const turn = yield* nextTurn(agent.seen)
      expect(turn.at(-1)).toMatchObject({ type: "finish", reply: "done" })
      yield* Fiber.join(answering)
      // Closing the agent sends what is left (the exporter's scope closes last).
      yield* agent.stop

      expect(collector.problems).toEqual([])
      expect(new Set(collector.requests.map((r) => r.contentType))).toEqual(new Set(["application/x-protobuf"]))
      expect(new Set(collector.requests.map((r) => r.path))).toEqual(new Set(["/v1/traces", "/v1/metrics", "/v1/logs"]))
      const spans = collector.spans
      const [turnSpan] = named(spans, "kern.agent.turn")
      expect(turnSpan).toBeDefined()
      expect(turnSpan!.resource).toMatchObject({ "service.name": "kern-otel-test", "kern.agent.name": "agent" })
      expect(turnSpan!.attributes).toMatchObject({
        "kern.turn.id": submitted.turnId,
        "kern.conversation.id": "main",
        "kern.interface": "cli",
        "kern.channel": "terminal",
        "kern.user.id": "operator",
        "gen_ai.request.model": "m",
        "gen_ai.usage.input_tokens": 360,
        "gen_ai.usage.output_tokens": 33,
        "kern.turn.steps": 3,
        "kern.turn.outcome": "ok"
      })
      expect(typeof turnSpan!.attributes["kern.usage.cost_usd_cents"]).toBe("number")

      // Three model steps under the turn, each with its tokens.
      const steps = named(spans, "kern.agent.modelStep").filter((step) => isUnder(spans, step, turnSpan!))
      expect(steps.map((step) => step.attributes["gen_ai.usage.input_tokens"]).sort()).toEqual([100, 120, 140])
      expect(steps.every((step) => step.attributes["gen_ai.request.model"] === "m")).toBe(true)

      // Two tool calls under the turn: the kernel's decision on each.
      const calls = named(spans, "kern.tool.call").filter((call) => isUnder(spans, call, turnSpan!))
      expect(calls).toHaveLength(2)
      const approved = calls.find((call) => call.attributes["kern.tool.decision"] === "approved")
      const refused = calls.find((call) => call.attributes["kern.tool.decision"] === "denied")
      expect(approved?.attributes).toMatchObject({
        "kern.tool.id": "bash",
        "kern.tool.safety_class": "DESTRUCTIVE",
        "kern.tool.approved_by": "operator",
        "kern.tool.status": "ok",
        "kern.tool.retries": 0,
        "kern.interface": "cli",
        "kern.user.id": "operator"
      })
      expect(refused?.attributes).toMatchObject({
        "kern.tool.id": "bash",
        "kern.tool.denied_by": "approval",
        "kern.tool.status": "denied",
        "kern.tool.error_code": "PERMISSION_DENIED"
      })
      expect(String(refused?.attributes["kern.tool.args"])).toContain("rm -rf build")
      // The approval asked, and the attempt that ran, are the approved call's children.
      const [execute] = named(spans, "kern.tool.execute").filter((span) => parentOf(spans, span)?.spanId === approved!.spanId)
      expect(execute?.attributes).toMatchObject({ "kern.tool.id": "bash", "kern.tool.attempt": 1 })
      expect(named(spans, "kern.approvals.ask").filter((span) => parentOf(spans, span)?.spanId === approved!.spanId)).toHaveLength(1)
      expect(named(spans, "kern.tool.execute").filter((span) => parentOf(spans, span)?.spanId === refused!.spanId)).toEqual([])

      // The credential-shaped argument left as a marker; neither it nor the provider key is anywhere on the wire.
      expect(String(approved!.attributes["kern.tool.args"])).toContain("[redacted:credential]")
      expect(collector.requests.length).toBeGreaterThan(0)
      expect(sent(collector, shapedToken)).toBe(false)
      expect(sent(collector, providerKey)).toBe(false)
      // The check can fail: what was sent in the clear is found.
      expect(sent(collector, "rm -rf build")).toBe(true)

      // The executor's metrics and the turn's log lines went out too, the lines tied to their spans.
      const toolCalls = collector.metrics.filter((metric) => metric.name === "kern_tool_calls_total")
      expect(toolCalls.flatMap((metric) => metric.points).some((point) => point.attributes["tool"] === "bash")).toBe(true)
      const started = collector.logs.find((record) => String(record.body).startsWith("turn started"))
      expect(started?.attributes).toMatchObject({ turn: submitted.turnId, user: "operator" })
      expect(started?.traceId).toBe(turnSpan!.traceId)
    }), 120_000)

  it.scopedLive("the standard variables over config: OTLP/JSON to OTEL_EXPORTER_OTLP_ENDPOINT with OTEL_EXPORTER_OTLP_HEADERS", () =>
    Effect.gen(function*() {
      const collector = yield* fakeOtlp
      const elsewhere = yield* downCollector()
      const server = yield* makeFakeServer
      // Config names a collector that is down; the environment's wins.
      const dir = agentDir(server, { otel: { endpoint: elsewhere, protocol: "http/protobuf" } })
      const agent = yield* start(dir, {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.origin,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_HEADERS: "x-team=kern%20ops,authorization=Bearer%20collector-token-0123456789",
        OTEL_SERVICE_NAME: "from-env",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test,team=a%2Cb",
        OTEL_BSP_SCHEDULE_DELAY: "50"
      })
      yield* server.reply(FakeReply.text("hello there"))
      yield* agent.runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "hi" })
      yield* nextTurn(agent.seen)
      // Spans go out on their own schedule while the agent runs (every 50 ms here), not only when it closes.
      expect(yield* eventually(() => collector.spans.some((span) => span.name === "kern.agent.turn"))).toBe(true)
      yield* agent.stop
      expect(collector.problems).toEqual([])
      const traces = collector.requests.filter((request) => request.path === "/v1/traces")
      expect(traces[0]).toMatchObject({ contentType: "application/json" })
      expect(traces[0]!.headers).toMatchObject({ "x-team": "kern ops", authorization: "Bearer collector-token-0123456789" })
      const [turnSpan] = named(collector.spans, "kern.agent.turn")
      expect(turnSpan!.resource).toMatchObject({ "service.name": "from-env", "deployment.environment": "test", team: "a,b" })
      expect(turnSpan!.attributes).toMatchObject({ "kern.turn.outcome": "ok", "gen_ai.usage.input_tokens": 12 })
    }), 120_000)

  it.scopedLive("a collector that is down: the turn still answers, the failure is logged once, closing does not hang", () =>
    Effect.gen(function*() {
      const down = yield* downCollector()
      const server = yield* makeFakeServer
      const dir = agentDir(server, { otel: { endpoint: down } })
      const agent = yield* start(dir, { OTEL_BSP_SCHEDULE_DELAY: "20", OTEL_BLRP_SCHEDULE_DELAY: "20" })
      for (const text of ["one", "two", "three"]) {
        yield* server.reply(FakeReply.text(`answer ${text}`))
        yield* agent.runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text })
        const turn = yield* nextTurn(agent.seen)
        expect(turn.at(-1)).toMatchObject({ type: "finish", reply: `answer ${text}` })
      }
      expect(yield* eventually(() => agent.lines.some((line) => line.message.includes("OpenTelemetry export of traces")))).toBe(true)
      yield* agent.stop.pipe(Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error("closing hung on the collector") }))
      const failures = agent.lines.filter((line) => line.message.startsWith("OpenTelemetry export of traces"))
      expect(failures).toHaveLength(1)
      expect(failures[0]).toMatchObject({ level: "WARN" })
      expect(failures[0]!.message).toContain(down)
    }), 120_000)

  it.scopedLive("a collector that never answers: turns go on, closing waits no more than its bound", () =>
    Effect.gen(function*() {
      const collector = yield* fakeOtlp
      collector.script(...Array.from({ length: 200 }, () => "hang" as const))
      const server = yield* makeFakeServer
      const dir = agentDir(server, { otel: { endpoint: collector.origin } })
      const agent = yield* start(dir, { OTEL_BSP_SCHEDULE_DELAY: "20", OTEL_BLRP_SCHEDULE_DELAY: "20", OTEL_EXPORTER_OTLP_TIMEOUT: "60000" })
      for (const text of ["one", "two"]) {
        yield* server.reply(FakeReply.text(`answer ${text}`))
        yield* agent.runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text })
        const turn = yield* nextTurn(agent.seen)
        expect(turn.at(-1)).toMatchObject({ type: "finish", reply: `answer ${text}` })
      }
      // The exports are stuck at the collector meanwhile.
      expect(yield* eventually(() => collector.requests.some((request) => request.path === "/v1/traces"))).toBe(true)
      yield* agent.stop.pipe(Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error("closing hung on the collector") }))
      // At most two requests per signal were ever in flight: nothing piled up behind the stuck ones.
      for (const path of ["/v1/traces", "/v1/logs"]) {
        expect(collector.requests.filter((request) => request.path === path).length, path).toBeLessThanOrEqual(2)
      }
    }), 120_000)

  const offCases: ReadonlyArray<readonly [string, (origin: string) => Record<string, unknown>, (origin: string) => Record<string, string>]> = [
    // The collector's address is in the environment under a name that is not a standard variable.
    ["no variable and no config", () => ({}), (origin) => ({ COLLECTOR: origin })],
    ["OTEL_SDK_DISABLED=true, whatever config says", (origin) => ({ otel: { endpoint: origin } }), () => ({ OTEL_SDK_DISABLED: "TRUE" })],
    ["config enabled: false, whatever the variables say", (origin) => ({ otel: { endpoint: origin, enabled: false } }), (origin) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: origin })]
  ]
  for (const [what, config, env] of offCases) {
    it.scopedLive(`off (${what}): nothing is sent to a collector that listens`, () =>
      Effect.gen(function*() {
        const collector = yield* fakeOtlp
        const server = yield* makeFakeServer
        const agent = yield* start(agentDir(server, config(collector.origin)), { ...env(collector.origin), OTEL_BSP_SCHEDULE_DELAY: "20" })
        yield* server.reply(FakeReply.text("quiet"))
        yield* agent.runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "hi" })
        expect((yield* nextTurn(agent.seen)).at(-1)).toMatchObject({ type: "finish", reply: "quiet" })
        yield* agent.stop
        expect(collector.requests).toEqual([])
      }), 120_000)
  }
})
