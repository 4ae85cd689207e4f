import { useState } from "preact/hooks"
import { Markdown } from "../Markdown.js"
import { arr, isObject, type Json, type JsonObject, num, str } from "../wire.js"
import { LoadedView } from "./LoadedView.js"
import { RawMessages } from "./RawMessages.js"
import { useLoaded } from "./useLoaded.js"

interface Segment {
  readonly id: string
  readonly level: number
  readonly parentId: string | undefined
  readonly summary: string
  readonly summaryTokens: number | undefined
  readonly sourceTokens: number | undefined
  readonly messages: number | undefined
  readonly sessionId: string | undefined
  readonly first: number | undefined
  readonly last: number | undefined
  readonly inContext: boolean
}

const idOf = (o: JsonObject, key: string): string | undefined => {
  const v = o[key]
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : undefined
}

const decodeSegments = (u: Json | undefined): ReadonlyArray<Segment> | undefined => {
  const list = Array.isArray(u) ? u : isObject(u) ? arr(u, "segments") : undefined
  if (list === undefined) return undefined
  return list.filter(isObject).map((s) => ({
    id: idOf(s, "id") ?? "?",
    level: num(s, "level") ?? 0,
    parentId: idOf(s, "parentId"),
    summary: str(s, "summary") ?? "",
    summaryTokens: num(s, "summaryTokens") ?? num(s, "tokens"),
    sourceTokens: num(s, "sourceTokens") ?? num(s, "originalTokens"),
    messages: num(s, "messageCount") ?? num(s, "messages"),
    sessionId: str(s, "sessionId"),
    first: num(s, "firstIndex") ?? num(s, "fromIndex"),
    last: num(s, "lastIndex") ?? num(s, "toIndex"),
    inContext: s["inContext"] === true
  }))
}

const compression = (s: Segment): string | undefined =>
  s.sourceTokens === undefined || s.summaryTokens === undefined || s.summaryTokens === 0
    ? undefined
    : `${s.sourceTokens.toLocaleString()} → ${s.summaryTokens.toLocaleString()} tokens (${(s.sourceTokens / s.summaryTokens).toFixed(1)}×)`

const SegmentNode = (
  { segment, children, onlyInContext }: {
    readonly segment: Segment
    readonly children: ReadonlyMap<string, ReadonlyArray<Segment>>
    readonly onlyInContext: boolean
  }
) => {
  const [open, setOpen] = useState(false)
  const [raw, setRaw] = useState(false)
  const kids = (children.get(segment.id) ?? []).filter((k) => !onlyInContext || k.inContext || (children.get(k.id)?.length ?? 0) > 0)
  const ratio = compression(segment)
  return (
    <li class={segment.inContext ? "segment in-context" : "segment"}>
      <button type="button" class="segment-head" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span class="tag">L{segment.level}</span> {segment.id}
        {segment.messages !== undefined && <span class="muted"> · {segment.messages} messages</span>}
        {ratio !== undefined && <span class="muted"> · {ratio}</span>}
        {segment.inContext && <span class="tag live-tag">in context</span>}
      </button>
      {open && (
        <div class="segment-detail">
          <Markdown text={segment.summary} class="summary" />
          {segment.sessionId !== undefined && segment.last !== undefined && (
            raw
              ? <RawMessages session={segment.sessionId} before={segment.last + 1} after={segment.first} />
              : <button type="button" class="link" onClick={() => setRaw(true)}>Show the raw messages</button>
          )}
        </div>
      )}
      {kids.length > 0 && (
        <details class="rolled-up">
          <summary>{kids.length} rolled-up {kids.length === 1 ? "segment" : "segments"}</summary>
          <ul>
            {kids.map((k) => <SegmentNode key={k.id} segment={k} children={children} onlyInContext={onlyInContext} />)}
          </ul>
        </details>
      )}
    </li>
  )
}

export const SegmentsTab = () => {
  const { loaded } = useLoaded("/segments", decodeSegments)
  const [onlyInContext, setOnlyInContext] = useState(false)
  return (
    <div class="segments">
      <div class="toolbar" role="radiogroup" aria-label="Which segments">
        <label>
          <input type="radio" name="seg-filter" checked={!onlyInContext} onChange={() => setOnlyInContext(false)} /> All
        </label>
        <label>
          <input type="radio" name="seg-filter" checked={onlyInContext} onChange={() => setOnlyInContext(true)} /> In context
        </label>
      </div>
      <LoadedView loaded={loaded} what="segments">
        {(segments) => {
          const children = new Map<string, Array<Segment>>()
          for (const s of segments) {
            if (s.parentId !== undefined) children.set(s.parentId, [...(children.get(s.parentId) ?? []), s])
          }
          const known = new Set(segments.map((s) => s.id))
          const roots = segments
            .filter((s) => s.parentId === undefined || !known.has(s.parentId))
            .filter((s) => !onlyInContext || s.inContext || (children.get(s.id)?.length ?? 0) > 0)
            .sort((a, b) => b.level - a.level)
          return roots.length === 0
            ? <p class="muted">No segments yet: a conversation is segmented once it is long enough.</p>
            : <ul class="segment-tree">{roots.map((s) => <SegmentNode key={s.id} segment={s} children={children} onlyInContext={onlyInContext} />)}</ul>
        }}
      </LoadedView>
    </div>
  )
}
