import { arr, isObject, type Json, num, obj, str } from "../wire.js"
import { Bar } from "./Bars.js"
import { LoadedView } from "./LoadedView.js"
import { useLoaded } from "./useLoaded.js"
import { approxTokens, splitTagged } from "./xmlSections.js"

interface Section {
  readonly kind: string
  readonly source: string
  readonly text: string
  readonly chars: number
}

const decodeSystem = (u: Json | undefined): { readonly sections: ReadonlyArray<Section>; readonly totalChars: number } | undefined => {
  if (!isObject(u)) return undefined
  const sections = arr(u, "sections").filter(isObject).map((s) => {
    const text = str(s, "text") ?? ""
    return { kind: str(s, "kind") ?? "section", source: str(s, "source") ?? "", text, chars: num(s, "chars") ?? text.length }
  })
  return { sections, totalChars: num(u, "totalChars") ?? sections.reduce((n, s) => n + s.chars, 0) }
}

/** The real breakdown in tokens, when the context route gives one (`{ system, summaries, messages }`, top level or under `breakdown`). */
const decodeBreakdown = (u: Json | undefined): ReadonlyArray<readonly [string, number]> | undefined => {
  if (!isObject(u)) return undefined
  const b = obj(u, "breakdown") ?? obj(u, "tokens") ?? u
  const figures = (["system", "summaries", "messages"] as const).flatMap((k) => {
    const v = num(b, k)
    return v === undefined ? [] : [[k, v] as const]
  })
  return figures.length === 0 ? undefined : figures
}

const SectionView = ({ section, max }: { readonly section: Section; readonly max: number }) => {
  const tokens = approxTokens(section.chars)
  const blocks = splitTagged(section.text)
  const nested = blocks.some((b) => b.tag !== undefined)
  return (
    <details class={`ctx-section ctx-${section.kind.replace(/[^a-z-]/g, "")}`}>
      <summary>
        <span class="ctx-kind">{section.kind}</span>
        <span class="ctx-source">{section.source}</span>
        <span class="ctx-size">≈{tokens.toLocaleString()} tokens</span>
        <Bar value={section.chars} max={max} label={`${section.source || section.kind}: about ${tokens} tokens`} />
      </summary>
      {nested
        ? blocks.map((b, i) =>
          b.tag === undefined ? <pre key={i} class="ctx-text">{b.text}</pre> : (
            <details key={i} class="ctx-tag">
              <summary>
                &lt;{b.tag}&gt; <span class="ctx-size">≈{approxTokens(b.text.length).toLocaleString()} tokens</span>
              </summary>
              <pre class="ctx-text">{b.text}</pre>
            </details>
          )
        )
        : <pre class="ctx-text">{section.text}</pre>}
    </details>
  )
}

export const ContextTab = () => {
  const { loaded: system } = useLoaded("/context/system", decodeSystem)
  const { loaded: breakdown } = useLoaded("/context/segments", decodeBreakdown)
  return (
    <div class="context">
      <h3>Breakdown</h3>
      <LoadedView loaded={breakdown} what="summary and message breakdown">
        {(figures) => {
          const total = figures.reduce((n, [, v]) => n + v, 0)
          return (
            <dl class="roles">
              {figures.map(([k, v]) => (
                <div key={k} class="role-row">
                  <dt>{k}</dt>
                  <dd>
                    <Bar value={v} max={total} label={`${k}: ${v} tokens`} /> {v.toLocaleString()} tokens
                  </dd>
                </div>
              ))}
            </dl>
          )
        }}
      </LoadedView>
      <h3>System prompt</h3>
      <LoadedView loaded={system} what="system prompt">
        {({ sections, totalChars }) => {
          const max = Math.max(1, ...sections.map((s) => s.chars))
          return (
            <>
              <p class="muted">
                {sections.length} sections, {totalChars.toLocaleString()} characters (≈{approxTokens(totalChars).toLocaleString()} tokens)
              </p>
              {sections.map((s, i) => <SectionView key={i} section={s} max={max} />)}
            </>
          )
        }}
      </LoadedView>
    </div>
  )
}
