// The OpenTelemetry exporter: loaded only when telemetry is on (src/runtime/telemetry.ts imports it dynamically), so
// an agent without a collector never loads @effect/opentelemetry.
import * as OtlpLogger from "@effect/opentelemetry/OtlpLogger"
import * as OtlpMetrics from "@effect/opentelemetry/OtlpMetrics"
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Effect, Layer, Logger, LogLevel, Option, Ref } from "effect"
import pkg from "../../package.json" with { type: "json" }
import type { KnownSecret } from "../config/KnownSecrets.js"
import type { OtelSettings, Signal, SignalExport } from "../config/otelSettings.js"
import { redactCredentialShapes } from "../kernel/credentialShapes.js"
import { mapStrings, redactSecretsInText } from "../kernel/secretGuard.js"

/** Export requests of one signal in flight at once; a batch beyond them is dropped, never queued without end. */
const maxInFlight = 2
/** Spans or log records sent in one request, at most; a full batch is sent at once, before the interval ends. */
const maxBatchSize = 512
/** How long closing the agent waits for the last batch of each signal to reach the collector. */
const shutdownTimeout = "3 seconds"

/**
 * Everything kern sends is hostile-input territory: a tool's arguments, an error's message, a log line may carry a
 * secret. So every string of every export (attribute values and keys, span and event names, log bodies, exception
 * messages) passes through the one redactor: the secrets kern knows become `[redacted:NAME]`, and anything shaped like
 * a credential (a key, a bearer token, a password in a URL) `[redacted:credential]`, whatever the safety mode. This is
 * the one door every signal leaves by.
 */
export const redactExport = (secrets: ReadonlyArray<KnownSecret>) => (data: unknown): unknown =>
  mapStrings(data, (text) => redactCredentialShapes(redactSecretsInText(text, secrets)))

const redactedSerialization = (protocol: SignalExport["protocol"], secrets: ReadonlyArray<KnownSecret>) =>
  Layer.effect(
    OtlpSerialization.OtlpSerialization,
    Effect.map(OtlpSerialization.OtlpSerialization, (plain) => {
      const redact = redactExport(secrets)
      return {
        traces: (data: unknown) => plain.traces(redact(data)),
        metrics: (data: unknown) => plain.metrics(redact(data)),
        logs: (data: unknown) => plain.logs(redact(data))
      }
    })
  ).pipe(Layer.provide(protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf))

/** Whether the collector answered the last export: a failure is reported once, and its recovery once. */
type Reachable = Ref.Ref<boolean>

/**
 * The exporter's HTTP client for one signal: each request bounded by the signal's timeout, at most `maxInFlight` at
 * once (a further one fails at once and its batch is dropped: a slow collector costs memory no larger than that), a
 * failure logged once until an export succeeds again. The exporter itself retries and, after a failure, pauses that
 * signal for a minute, dropping what arrives meanwhile: a turn never waits for telemetry.
 */
const boundedClient = (signal: Signal, target: SignalExport, reachable: Reachable) =>
  Layer.effect(
    HttpClient.HttpClient,
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const slots = yield* Effect.makeSemaphore(maxInFlight)
      const failed = (description: string) =>
        Effect.flatMap(Ref.getAndSet(reachable, false), (was) =>
          was
            ? Effect.logWarning(
              `OpenTelemetry export of ${signal} to ${target.url} failed (${description}); the agent goes on, ` +
                "and what it gathers meanwhile is dropped until the collector answers again"
            )
            : Effect.void)
      const succeeded = Effect.flatMap(Ref.getAndSet(reachable, true), (was) =>
        was ? Effect.void : Effect.logInfo(`OpenTelemetry export of ${signal} to ${target.url} works again`))
      return HttpClient.transform(client, (response, request) =>
        slots.withPermitsIfAvailable(1)(
          response.pipe(
            Effect.timeoutFail({
              duration: target.timeoutMs,
              onTimeout: () =>
                new HttpClientError.RequestError({ request, reason: "Transport", description: `no answer within ${target.timeoutMs} ms` })
            })
          )
        ).pipe(
          Effect.flatMap(Option.match({
            onNone: () =>
              Effect.fail(new HttpClientError.RequestError({ request, reason: "Transport", description: `${maxInFlight} exports already in flight` })),
            onSome: Effect.succeed
          })),
          Effect.tapBoth({
            onFailure: (error) => failed(error.message),
            onSuccess: (answer) => answer.status < 300 ? succeeded : failed(`HTTP ${answer.status}`)
          })
        ))
    })
  )

/** Log lines from info on: the debug lines (every tool call, every model step) stay in kern's own log. */
const exportedLogLevel = (level: LogLevel.LogLevel) => LogLevel.greaterThanEqual(level, LogLevel.Info)

/**
 * Spans, metrics (every Effect metric of the process: the executor's tool calls and latencies among them) and log
 * lines of the agent, each signal to its collector URL over OTLP/HTTP, until the layer's scope closes, when what is
 * left is sent (for at most three seconds).
 */
export const layer = (settings: OtelSettings, secrets: ReadonlyArray<KnownSecret>, agentName: string): Layer.Layer<never> =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const resource = {
      serviceName: settings.serviceName,
      serviceVersion: pkg.version,
      attributes: { ...settings.resourceAttributes, "kern.agent.name": agentName }
    }
    const wired = (signal: Signal, target: SignalExport) => <A, E>(exporter: Layer.Layer<A, E, HttpClient.HttpClient | OtlpSerialization.OtlpSerialization>) =>
      Effect.map(Ref.make(true), (reachable) =>
        exporter.pipe(
          Layer.provide(redactedSerialization(target.protocol, secrets)),
          Layer.provide(boundedClient(signal, target, reachable)),
          Layer.provide(NodeHttpClient.layerUndici)
        ))
    const layers: Array<Layer.Layer<never>> = []
    if (settings.traces !== undefined) {
      const target = settings.traces
      layers.push(yield* wired("traces", target)(OtlpTracer.layer({
        url: target.url,
        resource,
        headers: target.headers,
        exportInterval: target.intervalMs,
        maxBatchSize,
        shutdownTimeout
      })))
    }
    if (settings.metrics !== undefined) {
      const target = settings.metrics
      layers.push(yield* wired("metrics", target)(OtlpMetrics.layer({
        url: target.url,
        resource,
        headers: target.headers,
        exportInterval: target.intervalMs,
        shutdownTimeout
      })))
    }
    if (settings.logs !== undefined) {
      const target = settings.logs
      const logger = Layer.unwrapScoped(Effect.map(
        OtlpLogger.make({ url: target.url, resource, headers: target.headers, exportInterval: target.intervalMs, maxBatchSize, shutdownTimeout }),
        (exporter) => Logger.add(Logger.filterLogLevel(exporter, exportedLogLevel))
      ))
      layers.push(yield* wired("logs", target)(logger))
    }
    return Layer.mergeAll(Layer.empty, ...layers)
  }))
