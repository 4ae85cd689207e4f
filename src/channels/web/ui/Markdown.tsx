import { createContext } from "preact"
import { useContext, useMemo } from "preact/hooks"
import type { RenderMarkdown } from "./renderMarkdown.js"

export const MarkdownContext = createContext<RenderMarkdown>((text) => text)

/** Sanitized markdown (DOMPurify ran on it in makeMarkdown). */
export const Markdown = ({ text, class: className }: { readonly text: string; readonly class?: string }) => {
  const render = useContext(MarkdownContext)
  const html = useMemo(() => render(text), [render, text])
  return <div class={className === undefined ? "md" : `md ${className}`} dangerouslySetInnerHTML={{ __html: html }} />
}
