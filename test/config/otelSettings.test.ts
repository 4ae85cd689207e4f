import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { OtelConfig } from "../../src/config/otel.js"
import { parseKeyValues, resolveOtel, signalUrl } from "../../src/config/otelSettings.js"
import { decodeConfigFile } from "../../src/config/decode.js"
import { agentPaths } from "../../src/config/paths.js"

const config = (value: unknown) => Schema.decodeUnknownSync(OtelConfig)(value)

describe("otel settings (config `otel` and the standard OTEL_* variables)", () => {
  it("off without an endpoint anywhere: no SDK default of localhost:4318", () => {
    expect(resolveOtel(undefined, {})).toEqual({ settings: undefined, warnings: [] })
    expect(resolveOtel(undefined, { OTEL_SERVICE_NAME: "x", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }).settings).toBeUndefined()
    const empty = resolveOtel(config({}), {})
    expect(empty.settings).toBeUndefined()
    expect(empty.warnings.join("\n")).toContain("no endpoint")
  })

  it("the base endpoint gets each signal's path; a signal's own endpoint is used as it is", () => {
    expect(signalUrl("http://c:4318", "traces")).toBe("http://c:4318/v1/traces")
    expect(signalUrl("http://c:4318/otlp/", "logs")).toBe("http://c:4318/otlp/v1/logs")
    const { settings } = resolveOtel(undefined, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example.com/custom/path"
    })
    expect(settings?.traces?.url).toBe("https://traces.example.com/custom/path")
    expect(settings?.metrics?.url).toBe("http://collector:4318/v1/metrics")
    expect(settings?.logs?.url).toBe("http://collector:4318/v1/logs")
    expect(settings?.traces).toMatchObject({ protocol: "http/protobuf", timeoutMs: 10_000, intervalMs: 5_000 })
    expect(settings?.metrics?.intervalMs).toBe(60_000)
    expect(settings?.serviceName).toBe("kern")
  })

  it("the variables win over config key by key; config fills what they leave", () => {
    const otel = config({
      endpoint: "http://from-config:4318",
      protocol: "http/json",
      serviceName: "from-config",
      headers: { "X-Team": "config", "X-Only-Config": "yes" }
    })
    const fromConfig = resolveOtel(otel, {}).settings
    expect(fromConfig?.traces).toMatchObject({ url: "http://from-config:4318/v1/traces", protocol: "http/json" })
    expect(fromConfig?.traces?.headers).toEqual({ "x-team": "config", "x-only-config": "yes" })
    expect(fromConfig?.serviceName).toBe("from-config")
    const overridden = resolveOtel(otel, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://from-env:4318",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_HEADERS: "x-team=env",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-team=traces",
      OTEL_SERVICE_NAME: "from-env"
    }).settings
    expect(overridden?.traces).toMatchObject({ url: "http://from-env:4318/v1/traces", protocol: "http/protobuf" })
    expect(overridden?.logs?.protocol).toBe("http/json")
    expect(overridden?.traces?.headers).toEqual({ "x-team": "traces", "x-only-config": "yes" })
    expect(overridden?.metrics?.headers).toEqual({ "x-team": "env", "x-only-config": "yes" })
    expect(overridden?.serviceName).toBe("from-env")
  })

  it("either off switch wins: OTEL_SDK_DISABLED=true (any case), enabled: false; OTEL_<SIGNAL>_EXPORTER=none drops a signal", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }
    expect(resolveOtel(undefined, { ...env, OTEL_SDK_DISABLED: "True" }).settings).toBeUndefined()
    expect(resolveOtel(undefined, { ...env, OTEL_SDK_DISABLED: "false" }).settings).toBeDefined()
    expect(resolveOtel(config({ enabled: false }), env).settings).toBeUndefined()
    const noMetrics = resolveOtel(undefined, { ...env, OTEL_METRICS_EXPORTER: "none", OTEL_LOGS_EXPORTER: "console" })
    expect(noMetrics.settings?.metrics).toBeUndefined()
    expect(noMetrics.settings?.logs).toBeUndefined()
    expect(noMetrics.settings?.traces).toBeDefined()
    expect(noMetrics.warnings).toEqual([expect.stringContaining("OTEL_LOGS_EXPORTER=console")])
  })

  it("gRPC, a URL that is none and a malformed list are reported, never a crash", () => {
    const grpc = resolveOtel(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })
    expect(grpc.settings).toBeUndefined()
    expect(grpc.warnings.join("\n")).toContain("OTLP over HTTP only")
    const badUrl = resolveOtel(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })
    expect(badUrl.settings).toBeUndefined()
    expect(badUrl.warnings.join("\n")).toContain("OTEL_EXPORTER_OTLP_ENDPOINT is not an http(s) URL")
    const badLists = resolveOtel(undefined, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "no-equals-sign",
      OTEL_RESOURCE_ATTRIBUTES: "a=%E0%A4%A"
    })
    expect(badLists.settings?.traces?.headers).toEqual({})
    expect(badLists.settings?.resourceAttributes).toEqual({})
    expect(badLists.warnings).toHaveLength(2)
  })

  it("lists are W3C Baggage-like: trimmed, values percent-decoded; service.name from the attributes unless OTEL_SERVICE_NAME", () => {
    expect(parseKeyValues(" a = 1 , b=two%20words,c=x%3Dy ")).toEqual({ a: "1", b: "two words", c: "x=y" })
    expect(parseKeyValues("=v")).toBeUndefined()
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_RESOURCE_ATTRIBUTES: "service.name=attr,deployment.environment=prod" }
    expect(resolveOtel(undefined, env).settings?.serviceName).toBe("attr")
    expect(resolveOtel(undefined, { ...env, OTEL_SERVICE_NAME: "named" }).settings?.serviceName).toBe("named")
    expect(resolveOtel(undefined, env).settings?.resourceAttributes).toMatchObject({ "deployment.environment": "prod" })
  })

  it("timeouts and intervals from their variables; nonsense falls back to the default", () => {
    const { settings } = resolveOtel(undefined, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_TIMEOUT: "2500",
      OTEL_EXPORTER_OTLP_LOGS_TIMEOUT: "700",
      OTEL_BSP_SCHEDULE_DELAY: "250",
      OTEL_METRIC_EXPORT_INTERVAL: "soon"
    })
    expect(settings?.traces).toMatchObject({ timeoutMs: 2500, intervalMs: 250 })
    expect(settings?.logs?.timeoutMs).toBe(700)
    expect(settings?.metrics?.intervalMs).toBe(60_000)
  })

  it("config header values take ${NAME} from the environment; the values sent as headers are secrets the redactor knows", () =>
    Effect.gen(function*() {
      const raw = { otel: { endpoint: "http://c:4318", headers: { authorization: "Bearer ${COLLECTOR_TOKEN}", "x-missing": "${NOPE}" } } }
      const decoded = yield* decodeConfigFile("config.json", raw, "agent")
      const env = { COLLECTOR_TOKEN: "collector-token-0123456789", OTEL_EXPORTER_OTLP_LOGS_HEADERS: "x-api-key=logs-key-abcdefgh" }
      const resolved = resolveOtel(decoded.config.otel, env)
      expect(resolved.settings?.traces?.headers).toEqual({ authorization: "Bearer collector-token-0123456789" })
      expect(resolved.warnings).toEqual([expect.stringContaining("otel.headers.x-missing references NOPE")])
      const { secrets } = KnownSecrets.fromConfig({
        paths: agentPaths("/tmp/agent"),
        fileExists: true,
        config: decoded.config,
        env,
        secretKeys: [],
        warnings: []
      })
      expect(secrets.map((secret) => [secret.name, secret.value])).toEqual(expect.arrayContaining([
        ["COLLECTOR_TOKEN", "collector-token-0123456789"],
        ["OTEL_EXPORTER_OTLP_LOGS_HEADERS", "logs-key-abcdefgh"]
      ]))
    }).pipe(Effect.runPromise))

  it("a bad otel key in config.json is a config error naming it", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(decodeConfigFile("config.json", { otel: { endpoint: "collector" } }, "agent"))
      expect(error.message).toContain("otel")
      const protocol = yield* Effect.flip(decodeConfigFile("config.json", { otel: { endpoint: "http://c:4318", protocol: "grpc" } }, "agent"))
      expect(protocol.message).toContain("otel")
    }).pipe(Effect.runPromise))
})
