// The system prompt wraps its sections in XML-like tags (`<document path="…">`, `<notes_summary>`, `<tools>`,
// `<conversation_summary>` with `<summary>` blocks inside): read a section's tag and attributes, and split a text into
// its top-level tagged blocks and the plain text between them, so each block can fold on its own. kern writes `&lt;`
// for any of its own tags quoted inside a section, so the first matching close is always the real one.

export interface Block {
  /** The tag name, or undefined for plain text between tags. */
  readonly tag: string | undefined
  readonly text: string
}

/** One tagged element: `<tag a="b">body</tag>`. */
export interface Element {
  readonly tag: string
  readonly attributes: Readonly<Record<string, string>>
  readonly body: string
}

const opening = /<([A-Za-z_][\w.-]*)((?:\s[^<>]*)?)>/g

export const splitTagged = (text: string): ReadonlyArray<Block> => {
  const blocks: Array<Block> = []
  let plainFrom = 0
  opening.lastIndex = 0
  for (let match = opening.exec(text); match !== null; match = opening.exec(text)) {
    const tag = match[1] ?? ""
    const close = `</${tag}>`
    const end = text.indexOf(close, match.index + match[0].length)
    if (end === -1) continue
    const before = text.slice(plainFrom, match.index)
    if (before.trim().length > 0) blocks.push({ tag: undefined, text: before.trim() })
    blocks.push({ tag, text: text.slice(match.index + match[0].length, end).trim() })
    plainFrom = end + close.length
    opening.lastIndex = plainFrom
  }
  const rest = text.slice(plainFrom)
  if (rest.trim().length > 0) blocks.push({ tag: undefined, text: rest.trim() })
  return blocks
}

const entities: Readonly<Record<string, string>> = { "&quot;": "\"", "&lt;": "<", "&gt;": ">", "&amp;": "&" }

const attributePattern = /([A-Za-z_][\w.-]*)="([^"]*)"/g

/** The attributes of an opening tag's rest (` path="AGENTS.md" stale="true"`), their entities decoded. */
export const parseAttributes = (rest: string): Readonly<Record<string, string>> => {
  const attributes: Record<string, string> = {}
  for (const match of rest.matchAll(attributePattern)) {
    attributes[match[1] ?? ""] = (match[2] ?? "").replace(/&(?:quot|lt|gt|amp);/g, (entity) => entities[entity] ?? entity)
  }
  return attributes
}

/** The element `text` is, when it is exactly one (leading and trailing space aside); undefined for anything else. */
export const parseElement = (text: string): Element | undefined => {
  const trimmed = text.trim()
  const match = /^<([A-Za-z_][\w.-]*)((?:\s[^<>]*)?)>/.exec(trimmed)
  if (match === null) return undefined
  const tag = match[1] ?? ""
  const close = `</${tag}>`
  if (!trimmed.endsWith(close) || trimmed.indexOf(close, match[0].length) !== trimmed.length - close.length) return undefined
  return { tag, attributes: parseAttributes(match[2] ?? ""), body: trimmed.slice(match[0].length, trimmed.length - close.length).trim() }
}

/** A `<summary>` block's header lines (`level: L2`, `messages: 0-4500`, `first: …`, `last: …`) and the text after them. */
export const summaryFields = (text: string): { readonly fields: Readonly<Record<string, string>>; readonly body: string } => {
  const lines = text.split("\n")
  const fields: Record<string, string> = {}
  let index = 0
  for (; index < lines.length; index++) {
    const match = /^(level|messages|first|last):\s*(.*)$/.exec(lines[index] ?? "")
    if (match === null) break
    fields[match[1] ?? ""] = match[2] ?? ""
  }
  return { fields, body: lines.slice(index).join("\n").trim() }
}

/** Tokens estimated from characters (about four per token for English prose and code): for what the server did not count. */
export const approxTokens = (chars: number) => Math.ceil(chars / 4)
