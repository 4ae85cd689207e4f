// What DOMPurify lets through of a reply's HTML (renderMarkdown.ts applies it); apart so Node tests read it.

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
export const sanitizeConfig = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: [...forbiddenTags],
  FORBID_ATTR: ["style", "action", "formaction", "form", "srcdoc", "autofocus", "popover", "popovertarget"]
}

