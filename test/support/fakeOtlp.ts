import { Effect } from "effect"
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"
import {
  decodeLogsJson,
  decodeLogsProtobuf,
  decodeMetricsJson,
  decodeMetricsProtobuf,
  decodeTracesJson,
  decodeTracesProtobuf,
  type OtlpLogRecord,
  type OtlpMetric,
  type OtlpSpan
} from "./otlpWire.js"

/**
 * A fake OpenTelemetry collector on 127.0.0.1 speaking OTLP/HTTP as a real one does: `POST /v1/traces`, `/v1/metrics`,
 * `/v1/logs` with `application/x-protobuf` or `application/json` bodies, each decoded from its wire format
 * (otlpWire.ts) and answered 200 with an empty Export*ServiceResponse in the request's encoding. A body that does not
 * decode is answered 400 and recorded as a problem (`problems`), so a test sees a malformed export. `script` makes
 * the next requests fail with a status, or hang unanswered.
 */

export interface OtlpRequest {
  readonly path: string
  readonly contentType: string
  readonly headers: NodeHttp.IncomingHttpHeaders
  readonly bytes: number
  /** The body as it came, to search for what must never be sent (protobuf strings are plain UTF-8 in it). */
  readonly body: Buffer
}

export type OtlpAnswer = { readonly status: number } | "hang"

export interface FakeOtlp {
  readonly origin: string
  readonly requests: ReadonlyArray<OtlpRequest>
  readonly spans: ReadonlyArray<OtlpSpan>
  readonly logs: ReadonlyArray<OtlpLogRecord>
  readonly metrics: ReadonlyArray<OtlpMetric>
  /** Bodies that did not decode, with why. */
  readonly problems: ReadonlyArray<string>
  readonly script: (...answers: ReadonlyArray<OtlpAnswer>) => void
  readonly close: () => Promise<void>
}

const readBody = (request: NodeHttp.IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks)))
    request.on("error", reject)
  })

export const startFakeOtlp = (): Promise<FakeOtlp> =>
  new Promise((resolve) => {
    const requests: Array<OtlpRequest> = []
    const spans: Array<OtlpSpan> = []
    const logs: Array<OtlpLogRecord> = []
    const metrics: Array<OtlpMetric> = []
    const problems: Array<string> = []
    const scripted: Array<OtlpAnswer> = []
    const hanging: Array<NodeHttp.ServerResponse> = []

    const decode = (path: string, json: boolean, body: Buffer) => {
      switch (path) {
        case "/v1/traces":
          spans.push(...(json ? decodeTracesJson(JSON.parse(body.toString("utf8"))) : decodeTracesProtobuf(body)))
          return
        case "/v1/logs":
          logs.push(...(json ? decodeLogsJson(JSON.parse(body.toString("utf8"))) : decodeLogsProtobuf(body)))
          return
        case "/v1/metrics":
          metrics.push(...(json ? decodeMetricsJson(JSON.parse(body.toString("utf8"))) : decodeMetricsProtobuf(body)))
          return
        default:
          throw new Error(`no OTLP service at ${path}`)
      }
    }

    const server = NodeHttp.createServer((request, response) => {
      void readBody(request).then((body) => {
        const path = (request.url ?? "").split("?")[0] ?? ""
        const contentType = String(request.headers["content-type"] ?? "").split(";")[0]!.trim()
        requests.push({ path, contentType, headers: request.headers, bytes: body.length, body })
        const next = scripted.shift()
        if (next === "hang") return void hanging.push(response)
        if (next !== undefined) return void response.writeHead(next.status).end()
        const json = contentType === "application/json"
        if (request.method !== "POST" || (!json && contentType !== "application/x-protobuf")) {
          problems.push(`${request.method} ${path} with content type ${JSON.stringify(contentType)}`)
          return void response.writeHead(415).end()
        }
        try {
          decode(path, json, body)
        } catch (error) {
          problems.push(`${path} (${contentType}): ${error instanceof Error ? error.message : String(error)}`)
          return void response.writeHead(400).end()
        }
        if (json) response.writeHead(200, { "content-type": "application/json" }).end("{}")
        else response.writeHead(200, { "content-type": "application/x-protobuf" }).end()
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        origin: `http://127.0.0.1:${port}`,
        requests,
        spans,
        logs,
        metrics,
        problems,
        script: (...answers) => void scripted.push(...answers),
        close: () =>
          new Promise<void>((done) => {
            for (const response of hanging) response.destroy()
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

/** The fake collector for the test's scope. */
export const fakeOtlp = Effect.acquireRelease(Effect.promise(startFakeOtlp), (collector) => Effect.promise(collector.close))

/** An origin where nothing listens: a collector that is down (a port just freed). */
export const downCollector = (): Effect.Effect<string> =>
  Effect.async((resolve) => {
    const server = NodeHttp.createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(Effect.succeed(`http://127.0.0.1:${port}`)))
    })
  })

/** The spans' tree as `parent name > child name` lines, for a readable assertion. */
export const spanByName = (spans: ReadonlyArray<OtlpSpan>, name: string): ReadonlyArray<OtlpSpan> =>
  spans.filter((span) => span.name === name)

export const parentOf = (spans: ReadonlyArray<OtlpSpan>, span: OtlpSpan): OtlpSpan | undefined =>
  spans.find((candidate) => candidate.spanId === span.parentSpanId && candidate.traceId === span.traceId)

/** Whether `ancestor` is above `span` in its trace. */
export const isUnder = (spans: ReadonlyArray<OtlpSpan>, span: OtlpSpan, ancestor: OtlpSpan): boolean => {
  let at = parentOf(spans, span)
  while (at !== undefined) {
    if (at.spanId === ancestor.spanId) return true
    at = parentOf(spans, at)
  }
  return false
}
