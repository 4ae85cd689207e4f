// What DOMPurify lets through of a reply's HTML (renderMarkdown.ts applies it); apart so Node tests read it.

/**
 * Tags a reply may not render, whoever wrote it: a button or a form inside a reply could pass for kern's own (an
 * "Approve" under the approval dialog), embedded frames and objects load other pages, style and SVG restyle or
 * cover the page, meta and base redirect it or its links. `input` is not among them only for taskCheckbox below.
 */
export const forbiddenTags: ReadonlyArray<string> = [
  "button", "form", "select", "option", "optgroup", "textarea", "label", "fieldset", "datalist", "output",
  "iframe", "frame", "frameset", "object", "embed", "applet", "portal", "dialog", "template",
  "style", "link", "meta", "base", "svg", "math", "audio", "video", "source", "track", "canvas"
]

/** HTML only (no SVG or MathML), none of the forbidden tags, no style and no form attributes. */
export const sanitizeConfig = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: [...forbiddenTags],
  FORBID_ATTR: ["style", "action", "formaction", "form", "srcdoc", "autofocus", "popover", "popovertarget"]
}

export interface Attribute {
  readonly name: string
  readonly value: string
}

/**
 * What an `<input>` of a reply becomes: a checkbox (a GFM task, `- [x] done`) keeps its state and nothing else, and
 * is always disabled, a mark rather than a control; any other input is dropped (undefined).
 */
export const taskCheckbox = (attributes: ReadonlyArray<Attribute>): ReadonlyArray<Attribute> | undefined => {
  const named = (name: string) => attributes.find((attribute) => attribute.name.toLowerCase() === name)
  if (named("type")?.value.trim().toLowerCase() !== "checkbox") return undefined
  return [
    { name: "type", value: "checkbox" },
    ...(named("checked") === undefined ? [] : [{ name: "checked", value: "" }]),
    { name: "disabled", value: "" }
  ]
}
