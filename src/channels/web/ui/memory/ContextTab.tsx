import type { SystemSection } from "../../api.js"
import { decodeContextSegments } from "../wire.js"
import { Bar } from "./Bars.js"
import { LoadedView } from "./LoadedView.js"
import { RequestBreakdown } from "./TokenBreakdown.js"
import { decodeSystem, type Section } from "./responses.js"
import { useLoaded } from "./useLoaded.js"
import { approxTokens, type Element, parseElement, splitTagged, summaryFields } from "./xmlSections.js"

const kindLabels: Readonly<Record<SystemSection["kind"], string>> = {
  preamble: "preamble",
  file: "document",
  "latest-note": "latest note",
  "notes-summary": "notes summary",
  skills: "skills",
  tools: "tools",
  "conversation-summary": "conversation summary"
}

const labelOf = (kind: string) => (kindLabels as Readonly<Record<string, string>>)[kind] ?? kind

/** The opening tag as the model reads it, attributes included: `<document path="AGENTS.md">`. */
const openingTag = (element: Element) =>
  `<${[element.tag, ...Object.entries(element.attributes).map(([k, v]) => `${k}="${v}"`)].join(" ")}>`

const tokensText = (tokens: number, counted: boolean) => `${counted ? "" : "≈"}${tokens.toLocaleString()} tokens`

/** The `<summary>` blocks of `<conversation_summary>`, each folded under its level and message range. */
const Summaries = ({ body }: { readonly body: string }) => (
  <>
    {splitTagged(body).map((block, i) => {
      if (block.tag !== "summary") return <pre key={i} class="ctx-text">{block.text}</pre>
      const { fields, body: text } = summaryFields(block.text)
      const when = fields["first"] !== undefined && fields["last"] !== undefined ? ` · ${fields["first"]} – ${fields["last"]}` : ""
      return (
        <details key={i} class="ctx-tag">
          <summary>
            {fields["level"] ?? "summary"} · messages {fields["messages"] ?? "?"}{when}{" "}
            <span class="ctx-size">≈{approxTokens(block.text.length).toLocaleString()} tokens</span>
          </summary>
          <pre class="ctx-text">{text}</pre>
        </details>
      )
    })}
  </>
)

const SectionView = ({ section, max }: { readonly section: Section; readonly max: number }) => {
  const element = section.kind === "preamble" ? undefined : parseElement(section.text)
  return (
    <details class={`ctx-section ctx-${section.kind.replace(/[^a-z-]/g, "")}`}>
      <summary>
        <span class="ctx-kind">{labelOf(section.kind)}</span>
        <span class="ctx-source">{section.source}</span>
        <span class="ctx-size">{tokensText(section.tokens, section.counted)}</span>
        <Bar value={section.tokens} max={max} label={`${section.source || section.kind}: ${tokensText(section.tokens, section.counted)}`} />
      </summary>
      {element === undefined
        ? <pre class="ctx-text">{section.text}</pre>
        : (
          <>
            <code class="ctx-open">{openingTag(element)}</code>
            {element.tag === "conversation_summary" ? <Summaries body={element.body} /> : <pre class="ctx-text">{element.body}</pre>}
          </>
        )}
    </details>
  )
}

/** Seed 003's Context view: the next request's token breakdown (as the server labels it), and the system prompt section by section. */
export const ContextTab = () => {
  const { loaded: system } = useLoaded("/context/system", decodeSystem)
  const { loaded: context } = useLoaded("/context/segments", decodeContextSegments)
  return (
    <div class="context">
      <h3>Breakdown</h3>
      <RequestBreakdown context={context} />
      <h3>{system?._tag === "Ok" && system.value.request === "next" ? "System prompt of the next request" : "System prompt"}</h3>
      <LoadedView loaded={system} what="system prompt">
        {({ counted, sections, totalChars, totalTokens }) => {
          const max = Math.max(1, ...sections.map((s) => s.tokens))
          return (
            <>
              <p class="muted">
                {sections.length} sections, {tokensText(totalTokens, counted)} ({totalChars.toLocaleString()} characters)
              </p>
              {sections.map((s, i) => <SectionView key={i} section={s} max={max} />)}
            </>
          )
        }}
      </LoadedView>
    </div>
  )
}
