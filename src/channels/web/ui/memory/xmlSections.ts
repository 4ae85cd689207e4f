// The system prompt wraps parts in XML-like tags (<notes_summary>, <conversation_summary>, …): split a section's
// text into its top-level tagged blocks and the plain text between them, so each block can fold on its own.

export interface Block {
  /** The tag name, or undefined for plain text between tags. */
  readonly tag: string | undefined
  readonly text: string
}

const opening = /<([A-Za-z_][\w.-]*)(?:\s[^<>]*)?>/g

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

/** Tokens estimated from characters (about four per token for English prose and code). */
export const approxTokens = (chars: number) => Math.ceil(chars / 4)
