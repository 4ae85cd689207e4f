import { createContext } from "preact"
import { useContext, useMemo } from "preact/hooks"
import { CodeBlock } from "./CodeBlock.js"
import type { RenderMarkdown } from "./renderMarkdown.js"

/** main.tsx provides makeMarkdown(window); without it nothing renders (never unsanitized HTML). */
export const MarkdownContext = createContext<RenderMarkdown>(() => [])

/**
 * Sanitized markdown (DOMPurify ran on each `.md` block in makeMarkdown); its top-level code blocks are drawn here
 * as text, beside the markdown, with kern's own label and copy button.
 */
export const Markdown = ({ text, class: className }: { readonly text: string; readonly class?: string }) => {
  const render = useContext(MarkdownContext)
  const blocks = useMemo(() => render(text), [render, text])
  return (
    <div class={className === undefined ? "md-doc" : `md-doc ${className}`}>
      {blocks.map((block, i) =>
        block.kind === "code"
          ? <CodeBlock key={i} lang={block.lang} text={block.text} />
          : <div key={i} class="md" dangerouslySetInnerHTML={{ __html: block.html }} />
      )}
    </div>
  )
}
