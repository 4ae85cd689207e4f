import { Schema } from "effect"

const Text = Schema.NonEmptyTrimmedString.annotations({ identifier: "a non-empty string" })
const HttpUrl = Text.pipe(Schema.filter((text) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol)))
  .annotations({ identifier: "an http(s) URL" })

/** OTLP over HTTP, as the standard variable `OTEL_EXPORTER_OTLP_PROTOCOL` names it (gRPC is not spoken). */
export const OtlpProtocol = Schema.Literal("http/protobuf", "http/json")
export type OtlpProtocol = typeof OtlpProtocol.Type

/**
 * `otel`: export spans, metrics and logs over OTLP/HTTP to a collector. `endpoint` is the base URL (`/v1/traces`,
 * `/v1/metrics`, `/v1/logs` are added); header values may reference `.kern/.env` as `"${NAME}"`, and the values they
 * take are secrets the redactor knows. The standard OTEL_* variables win over these keys, one by one
 * (src/config/otelSettings.ts); `enabled: false` turns export off whatever the variables say.
 */
export const OtelConfig = Schema.Struct({
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  endpoint: Schema.optional(HttpUrl),
  headers: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), { default: () => ({}) }),
  protocol: Schema.optional(OtlpProtocol),
  serviceName: Schema.optional(Text)
})
export type OtelConfig = typeof OtelConfig.Type

export const otelExpectation =
  "an object { endpoint?, headers?, protocol?: \"http/protobuf\" | \"http/json\", serviceName?, enabled? } " +
  "(endpoint: the collector's OTLP/HTTP base URL such as \"http://127.0.0.1:4318\"; header values may be \"${NAME}\")"
