import { useState } from "preact/hooks"
import { compactionNote, type Part } from "./chatState.js"
import { deniedReason, toolState } from "./toolState.js"

type ToolPart = Extract<Part, { kind: "tool" }>

/** Outputs longer than this show their start until the reader asks for the rest. */
const previewChars = 4000

const formatParams = (params: unknown): string => {
  if (params === null || params === undefined) return "(none)"
  try {
    return JSON.stringify(params, null, 2)
  } catch {
    return String(params)
  }
}

export const formatDuration = (ms: number): string => ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`

export const ToolBlock = ({ part }: { readonly part: ToolPart }) => {
  const [full, setFull] = useState(false)
  const result = part.result
  const state = toolState(result)
  const reason = deniedReason(result)
  const note = result === undefined ? undefined : compactionNote(result.text)
  const output = result === undefined ? "" : full ? result.text : result.text.slice(0, previewChars)
  return (
    <details class={`tool tool-${state}`}>
      <summary aria-label={`Tool ${part.name}, ${state}`} title={reason}>
        <span class="tool-chevron" aria-hidden="true" />
        <span class="tool-name">{part.name}</span>
        <span class="tool-state">{state === "running" ? "running…" : state}</span>
        {result?.durationMs !== undefined && <span class="tool-duration">{formatDuration(result.durationMs)}</span>}
        {note !== undefined && <span class="tool-compacted">compacted</span>}
      </summary>
      <div class="tool-body">
        <h4>Arguments</h4>
        <pre class="tool-args">{formatParams(part.params)}</pre>
        {result !== undefined && (
          <>
            <h4>Output</h4>
            {note !== undefined && <p class="tool-note">Output compacted for the model: {note}</p>}
            <pre class="tool-output">{output}</pre>
            {!full && result.text.length > previewChars && (
              <button type="button" class="link" onClick={() => setFull(true)}>
                Show all {result.text.length.toLocaleString()} characters
              </button>
            )}
          </>
        )}
      </div>
    </details>
  )
}
