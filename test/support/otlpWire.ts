/**
 * OTLP's two HTTP encodings decoded into one shape, for the fake collector (fakeOtlp.ts): protobuf
 * (opentelemetry/proto/collector/{trace,metrics,logs}/v1 Export*ServiceRequest, read with a small wire-format
 * reader written from the protobuf encoding spec, for the fields tests look at) and JSON (OTLP/JSON: lowerCamelCase
 * fields, ids as hex strings, 64-bit integers as strings or numbers).
 */

export type AttributeValue = string | number | boolean | ReadonlyArray<AttributeValue> | Readonly<Record<string, unknown>> | Uint8Array | undefined

export interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  /** Empty for a root span. */
  readonly parentSpanId: string
  readonly name: string
  readonly kind: number
  readonly startTimeUnixNano: bigint
  readonly endTimeUnixNano: bigint
  readonly attributes: Readonly<Record<string, AttributeValue>>
  readonly status: { readonly code: number; readonly message: string }
  readonly events: ReadonlyArray<{ readonly name: string; readonly attributes: Readonly<Record<string, AttributeValue>> }>
  readonly resource: Readonly<Record<string, AttributeValue>>
}

export interface OtlpLogRecord {
  readonly body: AttributeValue
  readonly severityNumber: number
  readonly severityText: string
  readonly attributes: Readonly<Record<string, AttributeValue>>
  readonly traceId: string
  readonly spanId: string
  readonly resource: Readonly<Record<string, AttributeValue>>
}

export interface OtlpMetric {
  readonly name: string
  readonly description: string
  /** Which of gauge, sum, histogram carried its points, and how many points it had. */
  readonly type: "gauge" | "sum" | "histogram" | "other"
  readonly points: ReadonlyArray<{ readonly attributes: Readonly<Record<string, AttributeValue>>; readonly value: number }>
  readonly resource: Readonly<Record<string, AttributeValue>>
}

// --- protobuf wire format -------------------------------------------------------------------------------------------

interface Field {
  readonly number: number
  readonly wireType: number
  /** varint and fixed values */
  readonly int?: bigint
  /** length-delimited payload */
  readonly bytes?: Uint8Array
}

const readVarint = (buf: Uint8Array, at: number): [bigint, number] => {
  let result = 0n
  let shift = 0n
  let pos = at
  for (;;) {
    if (pos >= buf.length) throw new Error("truncated varint")
    const byte = buf[pos++]!
    result |= BigInt(byte & 0x7f) << shift
    if ((byte & 0x80) === 0) return [result, pos]
    shift += 7n
  }
}

const readFixed = (buf: Uint8Array, at: number, size: 4 | 8): bigint => {
  if (at + size > buf.length) throw new Error("truncated fixed field")
  let value = 0n
  for (let i = size - 1; i >= 0; i--) value = (value << 8n) | BigInt(buf[at + i]!)
  return value
}

/** The fields of one message, in order; unknown wire types are an error (the input is not protobuf). */
export const readFields = (buf: Uint8Array): ReadonlyArray<Field> => {
  const fields: Array<Field> = []
  let pos = 0
  while (pos < buf.length) {
    const [key, next] = readVarint(buf, pos)
    pos = next
    const number = Number(key >> 3n)
    const wireType = Number(key & 7n)
    switch (wireType) {
      case 0: {
        const [value, after] = readVarint(buf, pos)
        pos = after
        fields.push({ number, wireType, int: value })
        break
      }
      case 1:
        fields.push({ number, wireType, int: readFixed(buf, pos, 8) })
        pos += 8
        break
      case 2: {
        const [length, after] = readVarint(buf, pos)
        const end = after + Number(length)
        if (end > buf.length) throw new Error("truncated length-delimited field")
        fields.push({ number, wireType, bytes: buf.subarray(after, end) })
        pos = end
        break
      }
      case 5:
        fields.push({ number, wireType, int: readFixed(buf, pos, 4) })
        pos += 4
        break
      default:
        throw new Error(`unsupported wire type ${wireType}`)
    }
  }
  return fields
}

const utf8 = new TextDecoder("utf-8", { fatal: true })
const text = (field: Field | undefined): string => field?.bytes === undefined ? "" : utf8.decode(field.bytes)
const hex = (field: Field | undefined): string => field?.bytes === undefined ? "" : Buffer.from(field.bytes).toString("hex")
const all = (fields: ReadonlyArray<Field>, number: number) => fields.filter((field) => field.number === number)
const one = (fields: ReadonlyArray<Field>, number: number) => fields.find((field) => field.number === number)
const double = (value: bigint): number => {
  const view = new DataView(new ArrayBuffer(8))
  view.setBigUint64(0, value, true)
  return view.getFloat64(0, true)
}
const signed = (value: bigint): number => Number(BigInt.asIntN(64, value))

const anyValue = (buf: Uint8Array): AttributeValue => {
  const fields = readFields(buf)
  const field = fields[0]
  if (field === undefined) return undefined
  switch (field.number) {
    case 1:
      return text(field)
    case 2:
      return field.int !== 0n
    case 3:
      return signed(field.int ?? 0n)
    case 4:
      return double(field.int ?? 0n)
    case 5:
      return all(readFields(field.bytes!), 1).map((item) => anyValue(item.bytes!))
    case 6:
      return keyValues(all(readFields(field.bytes!), 1))
    case 7:
      return field.bytes
    default:
      return undefined
  }
}

const keyValues = (fields: ReadonlyArray<Field>): Record<string, AttributeValue> => {
  const out: Record<string, AttributeValue> = {}
  for (const field of fields) {
    const kv = readFields(field.bytes!)
    const value = one(kv, 2)
    out[text(one(kv, 1))] = value === undefined ? undefined : anyValue(value.bytes!)
  }
  return out
}

const resourceOf = (resourceSpans: ReadonlyArray<Field>) => {
  const resource = one(resourceSpans, 1)
  return resource === undefined ? {} : keyValues(all(readFields(resource.bytes!), 1))
}

/** ExportTraceServiceRequest: resource_spans(1) → resource(1), scope_spans(2) → spans(2). */
export const decodeTracesProtobuf = (buf: Uint8Array): ReadonlyArray<OtlpSpan> =>
  all(readFields(buf), 1).flatMap((rs) => {
    const resourceSpans = readFields(rs.bytes!)
    const resource = resourceOf(resourceSpans)
    return all(resourceSpans, 2).flatMap((ss) =>
      all(readFields(ss.bytes!), 2).map((sp): OtlpSpan => {
        const span = readFields(sp.bytes!)
        const status = one(span, 15)
        const statusFields = status === undefined ? [] : readFields(status.bytes!)
        return {
          traceId: hex(one(span, 1)),
          spanId: hex(one(span, 2)),
          parentSpanId: hex(one(span, 4)),
          name: text(one(span, 5)),
          kind: Number(one(span, 6)?.int ?? 0n),
          startTimeUnixNano: one(span, 7)?.int ?? 0n,
          endTimeUnixNano: one(span, 8)?.int ?? 0n,
          attributes: keyValues(all(span, 9)),
          events: all(span, 11).map((ev) => {
            const event = readFields(ev.bytes!)
            return { name: text(one(event, 2)), attributes: keyValues(all(event, 3)) }
          }),
          status: { code: Number(one(statusFields, 3)?.int ?? 0n), message: text(one(statusFields, 2)) },
          resource
        }
      })
    )
  })

/** ExportLogsServiceRequest: resource_logs(1) → resource(1), scope_logs(2) → log_records(2). */
export const decodeLogsProtobuf = (buf: Uint8Array): ReadonlyArray<OtlpLogRecord> =>
  all(readFields(buf), 1).flatMap((rl) => {
    const resourceLogs = readFields(rl.bytes!)
    const resource = resourceOf(resourceLogs)
    return all(resourceLogs, 2).flatMap((sl) =>
      all(readFields(sl.bytes!), 2).map((lr): OtlpLogRecord => {
        const record = readFields(lr.bytes!)
        const body = one(record, 5)
        return {
          body: body === undefined ? undefined : anyValue(body.bytes!),
          severityNumber: Number(one(record, 2)?.int ?? 0n),
          severityText: text(one(record, 3)),
          attributes: keyValues(all(record, 6)),
          traceId: hex(one(record, 9)),
          spanId: hex(one(record, 10)),
          resource
        }
      })
    )
  })

const numberPoint = (buf: Uint8Array) => {
  const point = readFields(buf)
  const asDouble = one(point, 4)
  const asInt = one(point, 6)
  return {
    attributes: keyValues(all(point, 7)),
    value: asDouble !== undefined ? double(asDouble.int ?? 0n) : signed(asInt?.int ?? 0n)
  }
}

/** ExportMetricsServiceRequest: resource_metrics(1) → resource(1), scope_metrics(2) → metrics(2). */
export const decodeMetricsProtobuf = (buf: Uint8Array): ReadonlyArray<OtlpMetric> =>
  all(readFields(buf), 1).flatMap((rm) => {
    const resourceMetrics = readFields(rm.bytes!)
    const resource = resourceOf(resourceMetrics)
    return all(resourceMetrics, 2).flatMap((sm) =>
      all(readFields(sm.bytes!), 2).map((m): OtlpMetric => {
        const metric = readFields(m.bytes!)
        const gauge = one(metric, 5)
        const sum = one(metric, 7)
        const histogram = one(metric, 9)
        const data = gauge ?? sum ?? histogram
        const points = data === undefined ? [] : all(readFields(data.bytes!), 1).map((p) =>
          histogram !== undefined
            ? { attributes: keyValues(all(readFields(p.bytes!), 9)), value: Number(one(readFields(p.bytes!), 4)?.int ?? 0n) }
            : numberPoint(p.bytes!)
        )
        return {
          name: text(one(metric, 1)),
          description: text(one(metric, 2)),
          type: gauge !== undefined ? "gauge" : sum !== undefined ? "sum" : histogram !== undefined ? "histogram" : "other",
          points,
          resource
        }
      })
    )
  })

// --- OTLP/JSON ------------------------------------------------------------------------------------------------------

type Json = Record<string, any>

const jsonValue = (value: Json | undefined): AttributeValue => {
  if (value === undefined || value === null) return undefined
  if ("stringValue" in value) return String(value["stringValue"])
  if ("boolValue" in value) return Boolean(value["boolValue"])
  if ("intValue" in value) return Number(value["intValue"])
  if ("doubleValue" in value) return Number(value["doubleValue"])
  if ("arrayValue" in value) return ((value["arrayValue"]?.values ?? []) as Array<Json>).map(jsonValue)
  if ("kvlistValue" in value) return jsonAttributes(value["kvlistValue"]?.values)
  return undefined
}

const jsonAttributes = (attributes: Array<Json> | undefined): Record<string, AttributeValue> =>
  Object.fromEntries((attributes ?? []).map((kv) => [String(kv["key"]), jsonValue(kv["value"])]))

const big = (value: unknown): bigint => (value === undefined || value === null ? 0n : BigInt(String(value)))

export const decodeTracesJson = (body: Json): ReadonlyArray<OtlpSpan> =>
  ((body["resourceSpans"] ?? []) as Array<Json>).flatMap((rs) => {
    const resource = jsonAttributes(rs["resource"]?.attributes)
    return ((rs["scopeSpans"] ?? []) as Array<Json>).flatMap((ss) =>
      ((ss["spans"] ?? []) as Array<Json>).map((span): OtlpSpan => ({
        traceId: String(span["traceId"] ?? ""),
        spanId: String(span["spanId"] ?? ""),
        parentSpanId: String(span["parentSpanId"] ?? ""),
        name: String(span["name"] ?? ""),
        kind: Number(span["kind"] ?? 0),
        startTimeUnixNano: big(span["startTimeUnixNano"]),
        endTimeUnixNano: big(span["endTimeUnixNano"]),
        attributes: jsonAttributes(span["attributes"]),
        events: ((span["events"] ?? []) as Array<Json>).map((event) => ({
          name: String(event["name"] ?? ""),
          attributes: jsonAttributes(event["attributes"])
        })),
        status: { code: Number(span["status"]?.code ?? 0), message: String(span["status"]?.message ?? "") },
        resource
      }))
    )
  })

export const decodeLogsJson = (body: Json): ReadonlyArray<OtlpLogRecord> =>
  ((body["resourceLogs"] ?? []) as Array<Json>).flatMap((rl) => {
    const resource = jsonAttributes(rl["resource"]?.attributes)
    return ((rl["scopeLogs"] ?? []) as Array<Json>).flatMap((sl) =>
      ((sl["logRecords"] ?? []) as Array<Json>).map((record): OtlpLogRecord => ({
        body: jsonValue(record["body"]),
        severityNumber: Number(record["severityNumber"] ?? 0),
        severityText: String(record["severityText"] ?? ""),
        attributes: jsonAttributes(record["attributes"]),
        traceId: String(record["traceId"] ?? ""),
        spanId: String(record["spanId"] ?? ""),
        resource
      }))
    )
  })

export const decodeMetricsJson = (body: Json): ReadonlyArray<OtlpMetric> =>
  ((body["resourceMetrics"] ?? []) as Array<Json>).flatMap((rm) => {
    const resource = jsonAttributes(rm["resource"]?.attributes)
    return ((rm["scopeMetrics"] ?? []) as Array<Json>).flatMap((sm) =>
      ((sm["metrics"] ?? []) as Array<Json>).map((metric): OtlpMetric => {
        const type = metric["gauge"] !== undefined ? "gauge" : metric["sum"] !== undefined ? "sum" : metric["histogram"] !== undefined ? "histogram" : "other"
        const data: Json | undefined = metric["gauge"] ?? metric["sum"] ?? metric["histogram"]
        return {
          name: String(metric["name"] ?? ""),
          description: String(metric["description"] ?? ""),
          type,
          points: ((data?.["dataPoints"] ?? []) as Array<Json>).map((point) => ({
            attributes: jsonAttributes(point["attributes"]),
            value: type === "histogram" ? Number(point["count"] ?? 0) : Number(point["asDouble"] ?? point["asInt"] ?? 0)
          })),
          resource
        }
      })
    )
  })
