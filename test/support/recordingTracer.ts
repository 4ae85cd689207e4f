import { type Context, type Exit, Option, Tracer } from "effect"

/** A span as the recording tracer keeps it. */
export class RecordedSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly traceId: string
  readonly sampled = true
  readonly attributes = new Map<string, unknown>()
  readonly links: Array<Tracer.SpanLink> = []
  status: Tracer.SpanStatus
  constructor(
    readonly name: string,
    readonly spanId: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Context.Context<never>,
    links: ReadonlyArray<Tracer.SpanLink>,
    startTime: bigint,
    readonly kind: Tracer.SpanKind
  ) {
    this.traceId = Option.match(parent, { onNone: () => `trace-of-${spanId}`, onSome: (p) => p.traceId })
    this.links.push(...links)
    this.status = { _tag: "Started", startTime }
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>) {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
  }
  attribute(key: string, value: unknown) {
    this.attributes.set(key, value)
  }
  event() {}
  addLinks(links: ReadonlyArray<Tracer.SpanLink>) {
    this.links.push(...links)
  }
  get parentSpanId(): string | undefined {
    return Option.getOrUndefined(Option.map(this.parent, (p) => p.spanId))
  }
  get ended(): boolean {
    return this.status._tag === "Ended"
  }
}

/** A Tracer that keeps every span it makes, in order, with sequential ids; provide it with `Layer.setTracer`. */
export const recordingTracer = () => {
  const spans: Array<RecordedSpan> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const span = new RecordedSpan(name, `span-${spans.length + 1}`, parent, context, links, startTime, kind)
      spans.push(span)
      return span
    },
    context: (f) => f()
  })
  return { tracer, spans }
}
