// A reply's markdown as blocks: its top-level fenced or indented code blocks apart, so the page draws them itself
// (CodeBlock.tsx: a language label and a copy button, the code as text), and the rest as HTML for DOMPurify.
import type { Marked, Token, TokensList } from "marked"

export type Block =
  | { readonly kind: "html"; readonly html: string }
  /** The code exactly as written between the fences; `lang` is the fence's first word ("" when none). */
  | { readonly kind: "code"; readonly lang: string; readonly text: string }

/** The fence's language: its first word, as marked leaves it after the backticks (`ts {1,3}` is ts). */
export const codeLanguage = (info: string | undefined): string => (info ?? "").trim().split(/\s+/)[0] ?? ""

/**
 * Splits `text` at its top-level code blocks; the runs of other tokens between them are rendered to HTML by
 * `toHtml` (which sanitizes), each run with the document's link definitions so reference links still resolve.
 */
export const markdownBlocks = (marked: Marked, text: string, toHtml: (tokens: TokensList) => string): ReadonlyArray<Block> => {
  const tokens = marked.lexer(text)
  const blocks: Array<Block> = []
  let run: Array<Token> = []
  const flush = () => {
    if (run.length === 0) return
    const html = toHtml(Object.assign(run, { links: tokens.links }))
    if (html.trim().length > 0) blocks.push({ kind: "html", html })
    run = []
  }
  for (const token of tokens) {
    if (token.type === "code") {
      flush()
      blocks.push({ kind: "code", lang: codeLanguage(token.lang), text: token.text })
    } else {
      run.push(token)
    }
  }
  flush()
  return blocks
}
