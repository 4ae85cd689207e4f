import { Effect, Layer } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import * as KnownSecrets from "../config/KnownSecrets.js"
import { resolveOtel } from "../config/otelSettings.js"

/**
 * OpenTelemetry export for an agent that runs turns, when config `otel` or the standard OTEL_* variables name a
 * collector (src/config/otelSettings.ts). Built right over the config, below everything else: the tracer and the
 * logger it installs are there before any span or fiber of the agent starts, and it closes last, sending what is left.
 * Off, it is an empty layer and @effect/opentelemetry is never loaded (src/runtime/otelExport.ts is imported here
 * only when export is on).
 */
export const layer = (report: (line: string) => Effect.Effect<void>): Layer.Layer<never, never, AgentConfig> =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const loaded = yield* AgentConfig
    const { settings, warnings } = resolveOtel(loaded.config.otel, loaded.env)
    for (const warning of warnings) yield* report(`warning: ${warning}`)
    if (settings === undefined) return Layer.empty
    const { secrets } = KnownSecrets.fromConfig(loaded)
    const exporter = yield* Effect.promise(() => import("./otelExport.js"))
    return exporter.layer(settings, secrets, loaded.config.name)
  }))
