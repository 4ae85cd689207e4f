// Markdown to sanitized HTML: marked renders, DOMPurify strips scripts, handlers and style attributes (the CSP would
// block inline styles anyway), and links open in a new tab without giving it this window.
import createDOMPurify, { type Config } from "dompurify"
import { Marked } from "marked"

export type RenderMarkdown = (text: string) => string

/**
 * Tags a reply may not render, whoever wrote it: a button or a form inside a reply could pass for kern's own (an
 * "Approve" under the approval dialog), embedded frames and objects load other pages, style and SVG restyle or
 * cover the page, meta and base redirect it or its links.
 */
export const forbiddenTags: ReadonlyArray<string> = [
  "button", "form", "input", "select", "option", "optgroup", "textarea", "label", "fieldset", "datalist", "output",
  "iframe", "frame", "frameset", "object", "embed", "applet", "portal", "dialog", "template",
  "style", "link", "meta", "base", "svg", "math", "audio", "video", "source", "track", "canvas"
]

/** HTML only (no SVG or MathML), none of the forbidden tags, no style and no form attributes. */
export const sanitizeConfig: Config = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: [...forbiddenTags],
  FORBID_ATTR: ["style", "action", "formaction", "form", "srcdoc", "autofocus", "popover", "popovertarget"]
}

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
