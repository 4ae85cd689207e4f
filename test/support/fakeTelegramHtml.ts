/**
 * How the Bot API reads `parse_mode: HTML`, as documented: the tags it supports, the four named entities plus
 * numeric ones, every tag closed in order; anything else is "can't parse entities". Returns the parsed text's
 * length (what the 4096 limit counts) or the error description Telegram would give.
 */

const supported = new Set([
  "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span", "tg-spoiler", "a", "code", "pre", "blockquote", "tg-emoji"
])

export type ParsedHtml = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly description: string }

export const parseTelegramHtml = (html: string): ParsedHtml => {
  const stack: Array<string> = []
  let text = ""
  let i = 0
  const fail = (what: string): ParsedHtml => ({ ok: false, description: `Bad Request: can't parse entities: ${what} at byte offset ${i}` })
  while (i < html.length) {
    const char = html[i]!
    if (char === "<") {
      const tag = /^<(\/?)([a-zA-Z-]+)(\s[^<>]*)?>/.exec(html.slice(i))
      if (tag === null) return fail("Unexpected end of name token")
      const name = tag[2]!.toLowerCase()
      if (!supported.has(name)) return fail(`Unsupported start tag "${name}"`)
      if (tag[1] === "/") {
        const top = stack.pop()
        if (top !== name) return fail(`Unexpected end tag`)
      } else {
        if (name === "a" && !/^\s+href="[^"]*"\s*$/.test(tag[3] ?? "")) return fail("Can't find href for tag \"a\"")
        stack.push(name)
      }
      i += tag[0].length
      continue
    }
    if (char === "&") {
      const entity = /^&(lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);/.exec(html.slice(i))
      if (entity === null) return fail("Character entity expected")
      const body = entity[1]!
      text += body === "lt" ? "<" : body === "gt" ? ">" : body === "amp" ? "&" : body === "quot" ? "\"" : "?"
      i += entity[0].length
      continue
    }
    text += char
    i += 1
  }
  if (stack.length > 0) return fail(`Can't find end tag corresponding to start tag "${stack[stack.length - 1]}"`)
  return { ok: true, text }
}
