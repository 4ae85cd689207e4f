// Markdown to sanitized HTML: marked renders, DOMPurify strips scripts, handlers and style attributes (the CSP would
// block inline styles anyway), and links open in a new tab without giving it this window.
import createDOMPurify from "dompurify"
import { Marked } from "marked"
import { sanitizeConfig } from "./sanitizeConfig.js"

export type RenderMarkdown = (text: string) => string

export const makeMarkdown = (window: Window & typeof globalThis): RenderMarkdown => {
  const purify = createDOMPurify(window)
  purify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A") {
      node.setAttribute("target", "_blank")
      node.setAttribute("rel", "noopener noreferrer")
    }
  })
  const marked = new Marked({ gfm: true, breaks: true, async: false })
  return (text) => purify.sanitize(marked.parse(text, { async: false }), sanitizeConfig)
}
