// Markdown to sanitized HTML: marked renders, DOMPurify strips scripts, handlers and style attributes (the CSP would
// block inline styles anyway), and links open in a new tab without giving it this window. Top-level code blocks stay
// apart as text (markdownBlocks.ts), for CodeBlock.tsx to draw with their label and copy button.
import createDOMPurify from "dompurify"
import { Marked } from "marked"
import { type Block, markdownBlocks } from "./markdownBlocks.js"
import { sanitizeConfig, taskCheckbox } from "./sanitizeConfig.js"

export type RenderMarkdown = (text: string) => ReadonlyArray<Block>

export const makeMarkdown = (window: Window & typeof globalThis): RenderMarkdown => {
  const purify = createDOMPurify(window)
  purify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A") {
      node.setAttribute("target", "_blank")
      node.setAttribute("rel", "noopener noreferrer")
    }
    if (node.tagName === "INPUT") {
      // A task list's box, disabled and with nothing else on it; any other input goes.
      const kept = taskCheckbox([...node.attributes])
      if (kept === undefined) {
        node.remove()
      } else {
        for (const { name } of [...node.attributes]) node.removeAttribute(name)
        for (const { name, value } of kept) node.setAttribute(name, value)
      }
    }
  })
  const marked = new Marked({ gfm: true, breaks: true, async: false })
  return (text) => markdownBlocks(marked, text, (tokens) => purify.sanitize(marked.parser(tokens, { async: false }), sanitizeConfig))
}
