/**
 * The model's Markdown as Telegram HTML (parse_mode HTML): bold, italic, strikethrough, inline code, fenced code
 * blocks, links and headings; everything else is text with `<`, `>` and `&` escaped. Each tag is written with its
 * closing tag, so the result is always balanced, also for a reply cut off mid-stream (an unclosed `**` stays text,
 * an unclosed fence runs to the end).
 */

export const escapeHtml = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

const escapeAttribute = (text: string): string => escapeHtml(text).replace(/"/g, "&quot;")

const isWordChar = (char: string | undefined): boolean => char !== undefined && /[\p{L}\p{N}]/u.test(char)

/** Schemes a link may have: anything else (javascript:, data:) stays text. */
const safeUrl = /^(https?:\/\/|mailto:|tg:\/\/)[^\s"<>]+$/i

interface Delimited {
  readonly open: string
  readonly tag: string
  /** `_` only opens and closes at a word's edge, so snake_case stays as it is. */
  readonly wordEdge: boolean
}

const delimiters: ReadonlyArray<Delimited> = [
  { open: "**", tag: "b", wordEdge: false },
  { open: "__", tag: "b", wordEdge: true },
  { open: "~~", tag: "s", wordEdge: false },
  { open: "*", tag: "i", wordEdge: false },
  { open: "_", tag: "i", wordEdge: true }
]

/** Where `d` closes after `from`, or -1: the content is not empty and does not start or end with a space. */
const closing = (text: string, from: number, d: Delimited): number => {
  if (text[from] === undefined || /\s/.test(text[from]!)) return -1
  let at = text.indexOf(d.open, from + 1)
  while (at !== -1) {
    const before = text[at - 1]
    const after = text[at + d.open.length]
    const edgeOk = !d.wordEdge || !isWordChar(after)
    const notDoubled = d.open.length === 2 || after !== d.open
    if (before !== undefined && !/\s/.test(before) && edgeOk && notDoubled && !text.slice(from, at).includes("\n\n")) return at
    at = text.indexOf(d.open, at + 1)
  }
  return -1
}

const link = /^\[([^\]\n]+)\]\(([^()\s]+)\)/

export const renderInline = (text: string): string => {
  let out = ""
  let i = 0
  while (i < text.length) {
    const char = text[i]!
    if (char === "`") {
      const end = text.indexOf("`", i + 1)
      if (end > i + 1) {
        out += `<code>${escapeHtml(text.slice(i + 1, end))}</code>`
        i = end + 1
        continue
      }
    }
    if (char === "[") {
      const match = link.exec(text.slice(i))
      if (match !== null && safeUrl.test(match[2]!)) {
        out += `<a href="${escapeAttribute(match[2]!)}">${renderInline(match[1]!)}</a>`
        i += match[0].length
        continue
      }
    }
    const d = delimiters.find((candidate) => text.startsWith(candidate.open, i))
    if (d !== undefined && (!d.wordEdge || !isWordChar(text[i - 1]))) {
      const start = i + d.open.length
      const end = closing(text, start, d)
      if (end !== -1) {
        out += `<${d.tag}>${renderInline(text.slice(start, end))}</${d.tag}>`
        i = end + d.open.length
        continue
      }
      // Not a delimiter here: the run of marks is text.
      out += escapeHtml(d.open)
      i += d.open.length
      continue
    }
    out += escapeHtml(char)
    i += 1
  }
  return out
}

const fence = /^\s*(```|~~~)/

/** Renders a whole reply (or the part of it streamed so far). */
export const renderMarkdown = (markdown: string): string => {
  const lines = markdown.split("\n")
  const out: Array<string> = []
  let prose: Array<string> = []
  const flushProse = () => {
    if (prose.length > 0) out.push(renderInline(prose.join("\n")))
    prose = []
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const opened = fence.exec(line)
    if (opened !== null) {
      flushProse()
      const code: Array<string> = []
      let j = i + 1
      while (j < lines.length && !lines[j]!.trimStart().startsWith(opened[1]!)) code.push(lines[j++]!)
      out.push(`<pre>${escapeHtml(code.join("\n"))}</pre>`)
      i = j
      continue
    }
    const heading = /^#{1,6}\s+(.*)$/.exec(line)
    if (heading !== null) {
      flushProse()
      out.push(`<b>${renderInline(heading[1]!)}</b>`)
      continue
    }
    const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line)
    prose.push(bullet === null ? line : `${bullet[1]}• ${bullet[2]}`)
  }
  flushProse()
  return out.join("\n")
}
