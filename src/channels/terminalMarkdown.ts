import { Lexer, type Token, type Tokens } from "marked"

/**
 * Markdown for a terminal: bold, italics, inline code, code blocks, headings, lists, quotes, links (text, then the
 * address) and tables with aligned columns, in ANSI styles. Text streams in deltas; a line is rendered once it is
 * complete (a table once its last row is), so the reply still appears as it is written. The text must already have
 * gone through neutralizeControls: the only escape sequences in the output are the styles added here.
 */

const sgr = (code: string) => (text: string) => `\u001b[${code}m${text}\u001b[0m`
const bold = sgr("1")
const italic = sgr("3")
const dim = sgr("2")
const code = sgr("36")
const underline = sgr("4")
const strike = sgr("9")

const inlineText = (tokens: ReadonlyArray<Token>): string =>
  tokens.map((token) => {
    switch (token.type) {
      case "strong":
        return bold(inlineText((token as Tokens.Strong).tokens))
      case "em":
        return italic(inlineText((token as Tokens.Em).tokens))
      case "del":
        return strike(inlineText((token as Tokens.Del).tokens))
      case "codespan":
        return code((token as Tokens.Codespan).text)
      case "link": {
        const link = token as Tokens.Link
        const label = inlineText(link.tokens)
        return link.text === link.href ? underline(link.href) : `${label} (${underline(link.href)})`
      }
      case "escape":
      case "text":
        return "tokens" in token && token.tokens !== undefined && token.tokens.length > 0 ? inlineText(token.tokens) : token.text
      default:
        return token.raw
    }
  }).join("")

const inline = (text: string): string => inlineText(Lexer.lexInline(text))

/** Visible width: the styles added take no column. */
const width = (text: string) => [...text.replace(/\u001b\[[0-9;]*m/g, "")].length

const cellsOf = (row: string): ReadonlyArray<string> =>
  row.trim().replace(/^\|/, "").replace(/\|$/, "").split(/(?<!\\)\|/).map((cell) => cell.trim())

const isTableRule = (line: string) => /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(line)
const isTableRow = (line: string) => line.trim().startsWith("|")

const renderTable = (rows: ReadonlyArray<string>): string => {
  const header = rows.length > 1 && isTableRule(rows[1]!)
  const cells = rows.filter((row) => !isTableRule(row)).map((row) => cellsOf(row).map(inline))
  const columns = Math.max(...cells.map((row) => row.length))
  const widths = Array.from({ length: columns }, (_, i) => Math.max(...cells.map((row) => width(row[i] ?? ""))))
  const line = (row: ReadonlyArray<string>, style: (text: string) => string) =>
    widths.map((w, i) => {
      const cell = row[i] ?? ""
      return style(cell) + " ".repeat(w - width(cell))
    }).join("  │  ").trimEnd()
  const out = cells.map((row, i) => line(row, header && i === 0 ? bold : (text) => text))
  if (header) out.splice(1, 0, dim(widths.map((w) => "─".repeat(w)).join("──┼──")))
  return out.map((row) => `${row}\n`).join("")
}

const renderLine = (line: string): string => {
  const heading = /^(#{1,6})\s+(.*)$/.exec(line)
  if (heading !== null) return bold(inline(heading[2]!))
  const item = /^(\s*)[-*+]\s+(?:\[([ xX])\]\s+)?(.*)$/.exec(line)
  if (item !== null) {
    const box = item[2] === undefined ? "" : item[2] === " " ? "☐ " : "☑ "
    return `${item[1]}• ${box}${inline(item[3]!)}`
  }
  const numbered = /^(\s*)(\d+[.)])\s+(.*)$/.exec(line)
  if (numbered !== null) return `${numbered[1]}${numbered[2]} ${inline(numbered[3]!)}`
  const quote = /^\s*>\s?(.*)$/.exec(line)
  if (quote !== null) return `${dim("│")} ${italic(inline(quote[1]!))}`
  if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) return dim("─".repeat(40))
  return inline(line)
}

export interface MarkdownStream {
  /** The output for `delta`: what it completed, rendered (possibly ""). */
  readonly push: (delta: string) => string
  /** What is held (a last line without its newline, an unfinished table), rendered: at the end of a reply. */
  readonly flush: () => string
}

/** A renderer for one reply at a time; with `styled` false the text passes unchanged (piped, NO_COLOR). */
export const makeMarkdownStream = (styled: boolean): MarkdownStream => {
  if (!styled) return { push: (delta) => delta, flush: () => "" }
  let pending = ""
  let fence: string | undefined
  let table: Array<string> = []

  const endTable = (): string => {
    if (table.length === 0) return ""
    const out = renderTable(table)
    table = []
    return out
  }

  const line = (text: string): string => {
    const fenceMark = /^\s*(`{3,}|~{3,})\s*([\w+#.-]*)\s*$/.exec(text)
    if (fence !== undefined) {
      if (fenceMark !== null && fenceMark[1]!.startsWith(fence) && fenceMark[2] === "") {
        fence = undefined
        return ""
      }
      return `${code(`  ${text}`)}\n`
    }
    if (isTableRow(text)) {
      table.push(text)
      return ""
    }
    const before = endTable()
    if (fenceMark !== null) {
      fence = fenceMark[1]
      return `${before}${fenceMark[2] === "" ? "" : `${dim(`  ${fenceMark[2]}`)}\n`}`
    }
    return `${before}${renderLine(text)}\n`
  }

  return {
    push: (delta) => {
      pending += delta
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      return lines.map(line).join("")
    },
    flush: () => {
      const last = pending
      pending = ""
      fence = undefined
      const out = last === "" ? endTable() : line(last).replace(/\n$/, "")
      return out + endTable()
    }
  }
}
