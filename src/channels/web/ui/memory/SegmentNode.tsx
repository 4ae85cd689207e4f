import { useState } from "preact/hooks"
import type { SegmentInfo } from "../../api.js"
import { Markdown } from "../Markdown.js"
import { RawMessages } from "./RawMessages.js"
import { compression, messageRange, timeRange, when } from "./segmentTree.js"

const n = (x: number) => x.toLocaleString()

const SegmentDetail = ({ segment, sessionId }: { readonly segment: SegmentInfo; readonly sessionId: string }) => {
  const [raw, setRaw] = useState(false)
  const ratio = compression(segment)
  return (
    <div class="segment-detail">
      {segment.summary === null
        ? <p class="muted not-summarized">Not summarized yet: the summarizer has not reached this segment (it retries after a turn).</p>
        // The summary is a model's markdown: the Markdown component sanitizes it; nothing else here is HTML.
        : <Markdown text={segment.summary} class="segment-summary" />}
      <dl class="segment-meta">
        <div>
          <dt>segment</dt>
          <dd>#{segment.id}, L{segment.level}{segment.parentId === null ? "" : ` (rolled up into #${segment.parentId})`}</dd>
        </div>
        <div>
          <dt>messages</dt>
          <dd>{`${n(segment.start)}–${n(segment.end - 1)} (${n(Math.max(0, segment.end - segment.start))})`}</dd>
        </div>
        <div>
          <dt>first</dt>
          <dd>{when(segment.firstAt)}</dd>
        </div>
        <div>
          <dt>last</dt>
          <dd>{when(segment.lastAt)}</dd>
        </div>
        <div>
          <dt>tokens</dt>
          <dd>{ratio ?? `${n(segment.tokens)} tokens, no summary yet`}</dd>
        </div>
        <div>
          <dt>in context</dt>
          <dd>{segment.inContext ? "yes: the model gets this summary now" : "no"}</dd>
        </div>
      </dl>
      {raw
        ? <RawMessages session={sessionId} before={segment.end} after={segment.start} />
        : <button type="button" class="link" onClick={() => setRaw(true)}>Show the raw messages</button>}
    </div>
  )
}

/**
 * One row of the tree: a button (so Tab reaches it and Enter/Space work) that opens the segment's summary and
 * metadata and, for a rolled-up parent, its children, each collapsed in turn.
 */
export const SegmentNode = (
  { segment, children, sessionId }: {
    readonly segment: SegmentInfo
    /** Children by parent id; undefined where the tree is shown flat (the "In context" filter). */
    readonly children: ReadonlyMap<number, ReadonlyArray<SegmentInfo>> | undefined
    readonly sessionId: string
  }
) => {
  const [open, setOpen] = useState(false)
  const kids = children?.get(segment.id) ?? []
  const ratio = compression(segment)
  return (
    <li class={segment.inContext ? "segment in-context" : "segment"} data-segment={segment.id}>
      <button type="button" class="segment-head" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span class="segment-chevron" aria-hidden="true">{open ? "▾" : "▸"}</span>
        <span class="tag level-tag">L{segment.level}</span>
        <span class="segment-range">{messageRange(segment)}</span>
        {segment.inContext && <span class="tag context-tag">in context</span>}
        {kids.length > 0 && <span class="muted segment-kids">{kids.length} rolled up</span>}
        <span class="segment-meta-line">
          <span class="segment-time">{timeRange(segment.firstAt, segment.lastAt)}</span>
          <span class="segment-ratio">{ratio ?? `${n(segment.tokens)} tokens · not summarized yet`}</span>
        </span>
      </button>
      {open && <SegmentDetail segment={segment} sessionId={sessionId} />}
      {open && kids.length > 0 && (
        <ul class="segment-children" aria-label={`Segments rolled up into L${segment.level} #${segment.id}`}>
          {kids.map((k) => <SegmentNode key={k.id} segment={k} children={children} sessionId={sessionId} />)}
        </ul>
      )}
    </li>
  )
}
