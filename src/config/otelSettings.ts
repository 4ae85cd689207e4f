import { type OtelConfig, type OtlpProtocol } from "./otel.js"
import { referencedNames, resolveReferences } from "./mcpServers.js"

/**
 * Where and how kern exports telemetry, from config `otel` and the standard variables of the OpenTelemetry
 * specification (SDK environment variables, OTLP exporter configuration). The variables win over the config keys,
 * one by one, as KERN_* overrides win over config.json: a deployment's environment says where its collector is. Either
 * off switch wins: `OTEL_SDK_DISABLED=true` or `otel.enabled: false`.
 *
 * Unlike an OpenTelemetry SDK, kern exports nothing unless an endpoint is named (there is no default
 * `http://localhost:4318`): off costs nothing, and no agent sends its spans anywhere by surprise.
 */

export const signals = ["traces", "metrics", "logs"] as const
export type Signal = typeof signals[number]

export interface SignalExport {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly protocol: OtlpProtocol
  /** How long one export request may take, in milliseconds (`OTEL_EXPORTER_OTLP_TIMEOUT`, 10 s by default). */
  readonly timeoutMs: number
  /** How often what was gathered is sent, in milliseconds. */
  readonly intervalMs: number
}

export interface OtelSettings {
  readonly traces?: SignalExport | undefined
  readonly metrics?: SignalExport | undefined
  readonly logs?: SignalExport | undefined
  readonly serviceName: string
  readonly resourceAttributes: Readonly<Record<string, string>>
}

export interface ResolvedOtel {
  /** Absent when nothing is exported. */
  readonly settings: OtelSettings | undefined
  /** What the operator should hear about (a variable kern could not read, gRPC asked for). */
  readonly warnings: ReadonlyArray<string>
}

const upper: Record<Signal, string> = { traces: "TRACES", metrics: "METRICS", logs: "LOGS" }

/** The specification's defaults: spans every 5 s (BSP), metrics every 60 s, logs every 1 s (BLRP). */
const intervalVariables: Record<Signal, readonly [string, number]> = {
  traces: ["OTEL_BSP_SCHEDULE_DELAY", 5_000],
  metrics: ["OTEL_METRIC_EXPORT_INTERVAL", 60_000],
  logs: ["OTEL_BLRP_SCHEDULE_DELAY", 1_000]
}

const defaultTimeoutMs = 10_000

/** `key1=value1,key2=value2` (W3C Baggage without properties), values percent-decoded; undefined when malformed. */
export const parseKeyValues = (text: string): Record<string, string> | undefined => {
  const out: Record<string, string> = {}
  for (const member of text.split(",")) {
    if (member.trim() === "") continue
    const at = member.indexOf("=")
    if (at <= 0) return undefined
    const key = member.slice(0, at).trim()
    if (key === "") return undefined
    try {
      out[key] = decodeURIComponent(member.slice(at + 1).trim())
    } catch {
      return undefined
    }
  }
  return out
}

/** A base endpoint with a signal's path added (`http://c:4318` → `http://c:4318/v1/traces`), as the specification says. */
export const signalUrl = (base: string, signal: Signal): string => `${base.endsWith("/") ? base : `${base}/`}v1/${signal}`

const isHttpUrl = (text: string): boolean => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol)

const positiveInt = (text: string | undefined): number | undefined => {
  if (text === undefined || !/^\d+$/.test(text.trim())) return undefined
  const value = Number(text.trim())
  return value > 0 ? value : undefined
}

/**
 * The export settings for `config` (config.json's `otel`, absent when not set) and the agent's environment
 * (inherited, with `.kern/.env` on top).
 */
export const resolveOtel = (config: OtelConfig | undefined, env: Readonly<Record<string, string | undefined>>): ResolvedOtel => {
  const warnings: Array<string> = []
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim()
    return value === undefined || value === "" ? undefined : value
  }
  if (read("OTEL_SDK_DISABLED")?.toLowerCase() === "true" || config?.enabled === false) return { settings: undefined, warnings }

  const configHeaders: Record<string, string> = {}
  for (const [name, value] of Object.entries(config?.headers ?? {})) {
    const resolved = resolveReferences(value, Object.fromEntries(
      Object.entries(env).flatMap(([key, v]) => v === undefined ? [] : [[key, v]])
    ))
    if ("missing" in resolved) warnings.push(`otel.headers.${name} references ${resolved.missing}, which is not set; the header is left out`)
    else configHeaders[name.toLowerCase()] = resolved.value
  }
  const headerVariable = (name: string): Record<string, string> => {
    const text = read(name)
    if (text === undefined) return {}
    const parsed = parseKeyValues(text)
    if (parsed === undefined) {
      warnings.push(`${name} is not a list of name=value pairs (values percent-encoded); it is ignored`)
      return {}
    }
    return Object.fromEntries(Object.entries(parsed).map(([key, value]) => [key.toLowerCase(), value]))
  }
  const urlVariable = (name: string): string | undefined => {
    const text = read(name)
    if (text === undefined || isHttpUrl(text)) return text
    warnings.push(`${name} is not an http(s) URL (${JSON.stringify(text.slice(0, 80))}); it is ignored`)
    return undefined
  }
  const baseEndpoint = urlVariable("OTEL_EXPORTER_OTLP_ENDPOINT")
  const baseHeaders = headerVariable("OTEL_EXPORTER_OTLP_HEADERS")

  const signalExport = (signal: Signal): SignalExport | undefined => {
    const exporters = read(`OTEL_${upper[signal]}_EXPORTER`)
    if (exporters !== undefined) {
      const names = exporters.split(",").map((name) => name.trim().toLowerCase())
      if (!names.includes("otlp")) {
        if (!names.every((name) => name === "none")) {
          warnings.push(`OTEL_${upper[signal]}_EXPORTER=${exporters}: kern exports only otlp; ${signal} are not exported`)
        }
        return undefined
      }
    }
    const own = urlVariable(`OTEL_EXPORTER_OTLP_${upper[signal]}_ENDPOINT`)
    const base = baseEndpoint ?? config?.endpoint
    const url = own ?? (base === undefined ? undefined : signalUrl(base, signal))
    if (url === undefined) return undefined
    const protocol = read(`OTEL_EXPORTER_OTLP_${upper[signal]}_PROTOCOL`) ?? read("OTEL_EXPORTER_OTLP_PROTOCOL") ??
      config?.protocol ?? "http/protobuf"
    if (protocol !== "http/protobuf" && protocol !== "http/json") {
      warnings.push(
        `OTLP protocol ${JSON.stringify(protocol)} for ${signal}: kern speaks OTLP over HTTP only ` +
          "(http/protobuf or http/json); they are not exported"
      )
      return undefined
    }
    const [intervalName, intervalDefault] = intervalVariables[signal]
    return {
      url,
      headers: { ...configHeaders, ...baseHeaders, ...headerVariable(`OTEL_EXPORTER_OTLP_${upper[signal]}_HEADERS`) },
      protocol,
      timeoutMs: positiveInt(read(`OTEL_EXPORTER_OTLP_${upper[signal]}_TIMEOUT`)) ?? positiveInt(read("OTEL_EXPORTER_OTLP_TIMEOUT")) ??
        defaultTimeoutMs,
      intervalMs: positiveInt(read(intervalName)) ?? intervalDefault
    }
  }
  const traces = signalExport("traces")
  const metrics = signalExport("metrics")
  const logs = signalExport("logs")
  if (traces === undefined && metrics === undefined && logs === undefined) {
    if (config !== undefined && config.endpoint === undefined && baseEndpoint === undefined) {
      warnings.push("otel has no endpoint (nor OTEL_EXPORTER_OTLP_ENDPOINT): nothing is exported")
    }
    return { settings: undefined, warnings }
  }

  const resourceText = read("OTEL_RESOURCE_ATTRIBUTES")
  const parsedResource = resourceText === undefined ? {} : parseKeyValues(resourceText)
  if (parsedResource === undefined) {
    warnings.push("OTEL_RESOURCE_ATTRIBUTES is not a list of key=value pairs (values percent-encoded); it is ignored")
  }
  const resourceAttributes = parsedResource ?? {}
  const serviceName = read("OTEL_SERVICE_NAME") ?? resourceAttributes["service.name"] ?? config?.serviceName ?? "kern"
  return { settings: { traces, metrics, logs, serviceName, resourceAttributes }, warnings }
}

/** The variables whose values reach the collector as headers: their values are secrets (an API key, a token). */
export const otelHeaderSecrets = (
  config: OtelConfig | undefined,
  env: Readonly<Record<string, string | undefined>>
): ReadonlyArray<readonly [string, string]> => {
  const fromVariables = ["OTEL_EXPORTER_OTLP_HEADERS", ...signals.map((signal) => `OTEL_EXPORTER_OTLP_${upper[signal]}_HEADERS`)]
    .flatMap((name) => {
      const text = env[name]
      const parsed = text === undefined ? undefined : parseKeyValues(text)
      return parsed === undefined ? [] : Object.values(parsed).map((value) => [name, value] as const)
    })
  const referenced = Object.values(config?.headers ?? {}).flatMap(referencedNames).flatMap((name) => {
    const value = env[name]
    return value === undefined ? [] : [[name, value] as const]
  })
  return [...referenced, ...fromVariables]
}
