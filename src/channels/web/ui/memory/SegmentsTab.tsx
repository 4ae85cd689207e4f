import { useMemo, useState } from "preact/hooks"
import type { SegmentsResponse } from "../../api.js"
import { decodeContextSegments, decodeSegments } from "../wire.js"
import { LoadedView } from "./LoadedView.js"
import { SegmentNode } from "./SegmentNode.js"
import { buildTree, cutLine } from "./segmentTree.js"
import { RequestBreakdown } from "./TokenBreakdown.js"
import { useLoaded } from "./useLoaded.js"

const Tree = ({ tree, onlyInContext }: { readonly tree: SegmentsResponse; readonly onlyInContext: boolean }) => {
  const { roots, children, inContext } = useMemo(() => buildTree(tree.segments), [tree])
  if (tree.segments.length === 0) {
    return <p class="muted">No segments yet: a conversation is segmented once it is long enough (10 messages and 10k tokens).</p>
  }
  if (onlyInContext && inContext.length === 0) {
    return <p class="muted">No summary is in context: every message the model needs still fits raw.</p>
  }
  // "In context" is the frontier composeHistory chose, from several levels: shown flat, since an in-context parent's
  // children are not (it covers them) and a parent that was expanded is not in context itself.
  return (
    <ul class="segment-tree" aria-label={onlyInContext ? "Segments in context" : "Segment tree"}>
      {(onlyInContext ? inContext : roots).map((s) => (
        <SegmentNode key={`${onlyInContext}-${s.id}`} segment={s} children={onlyInContext ? undefined : children} sessionId={tree.sessionId} />
      ))}
    </ul>
  )
}

/** Seed 003's Segments view: the session's segment tree, what of it the model gets now, and the context's figures. */
export const SegmentsTab = () => {
  const { loaded } = useLoaded("/segments", decodeSegments)
  const { loaded: context } = useLoaded("/context/segments", decodeContextSegments)
  const [onlyInContext, setOnlyInContext] = useState(false)
  return (
    <div class="segments">
      <LoadedView loaded={loaded} what="segment tree">
        {(tree) => (
          <>
            <div class="segments-head">
              <p class="segments-figures">
                <span class="session-id">{tree.sessionId}</span> · {tree.messages.toLocaleString()} messages ·{" "}
                {cutLine(tree.messages, tree.cut)} · {tree.segments.filter((s) => s.inContext).length} summaries in context
              </p>
              <RequestBreakdown context={context} />
            </div>
            <div class="toolbar" role="radiogroup" aria-label="Which segments">
              <label>
                <input type="radio" name="seg-filter" checked={!onlyInContext} onChange={() => setOnlyInContext(false)} /> All
              </label>
              <label>
                <input type="radio" name="seg-filter" checked={onlyInContext} onChange={() => setOnlyInContext(true)} /> In context
              </label>
            </div>
            <Tree tree={tree} onlyInContext={onlyInContext} />
          </>
        )}
      </LoadedView>
    </div>
  )
}
