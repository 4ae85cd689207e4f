/**
 * Splits Telegram HTML into messages of at most 4096 characters, counted as Telegram counts them: the text after
 * parsing (tags cost nothing, `&amp;` is one character), in UTF-16 code units. A cut falls after a paragraph break, else a line
 * break, else a space, preferring places outside any tag; only an entity longer than a message (a huge code block)
 * is cut inside, and then the chunk closes its open tags and the next reopens them, so every chunk is balanced.
 * Nothing is dropped: the whitespace at a cut ends the earlier chunk (Telegram trims it).
 */

export const messageLimit = 4096

type Unit =
  | { readonly kind: "open"; readonly text: string; readonly name: string }
  | { readonly kind: "close"; readonly text: string }
  | { readonly kind: "char"; readonly text: string; readonly visible: string }

const named: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: "\"" }

const unescape = (entity: string): string => {
  const body = entity.slice(1, -1)
  if (body.startsWith("#x") || body.startsWith("#X")) return String.fromCodePoint(parseInt(body.slice(2), 16))
  if (body.startsWith("#")) return String.fromCodePoint(parseInt(body.slice(1), 10))
  return named[body] ?? entity
}

const unitPattern = /<\/([a-z-]+)\s*>|<([a-z-]+)(\s[^>]*)?>|&(#\d+|#x[0-9a-f]+|[a-z]+);|[\s\S]/giu

/** Tags, entities and characters (a surrogate pair is one character: a cut never halves it). */
const units = (html: string): Array<Unit> => {
  const out: Array<Unit> = []
  for (const match of html.matchAll(unitPattern)) {
    const text = match[0]
    if (match[1] !== undefined) out.push({ kind: "close", text })
    else if (match[2] !== undefined) out.push({ kind: "open", text, name: match[2].toLowerCase() })
    else out.push({ kind: "char", text, visible: match[4] !== undefined ? unescape(text) : text })
  }
  return out
}

/** The text a reader sees: tags removed, entities decoded. */
export const visibleText = (html: string): string =>
  units(html).map((unit) => (unit.kind === "char" ? unit.visible : "")).join("")

type CutClass = "paragraph" | "line" | "word"
const order: ReadonlyArray<CutClass> = ["paragraph", "line", "word"]

export const splitHtml = (html: string, limit = messageLimit): ReadonlyArray<string> => {
  const all = units(html)
  const chunks: Array<string> = []
  let start = 0
  let open: ReadonlyArray<Extract<Unit, { kind: "open" }>> = []
  while (start < all.length) {
    const prefix = open.map((unit) => unit.text).join("")
    const stack = [...open]
    let length = 0
    // The last cut of each kind that fits: outside any tag (depth 0) or inside one.
    const best = new Map<string, { end: number; stack: ReadonlyArray<Extract<Unit, { kind: "open" }>> }>()
    let end = -1
    let endStack: ReadonlyArray<Extract<Unit, { kind: "open" }>> = stack
    let j = start
    for (; j < all.length; j++) {
      const unit = all[j]!
      if (unit.kind === "open") stack.push(unit)
      else if (unit.kind === "close") stack.pop()
      else length += unit.visible.length
      if (length > limit) break
      if (unit.kind !== "char") continue
      const here = { end: j + 1, stack: [...stack] }
      end = here.end
      endStack = here.stack
      const previous = all[j - 1]
      const kind: CutClass | undefined = unit.visible === "\n"
        ? previous?.kind === "char" && previous.visible === "\n" ? "paragraph" : "line"
        : /\s/.test(unit.visible) ? "word" : undefined
      if (kind !== undefined) best.set(`${kind}:${stack.length === 0 ? 0 : 1}`, here)
    }
    let cut: { end: number; stack: ReadonlyArray<Extract<Unit, { kind: "open" }>> }
    if (j >= all.length) {
      // The rest fits.
      cut = { end: all.length, stack }
    } else {
      const preferred = [0, 1].flatMap((depth) => order.map((kind) => best.get(`${kind}:${depth}`)))
        .find((candidate) => candidate !== undefined)
      // No boundary fits: cut after the last character that does (at least one, so the loop moves on).
      cut = preferred ?? (end === -1 ? forced(all, start, open) : { end, stack: endStack })
    }
    let stop = cut.end
    const remaining = [...cut.stack]
    // Closing tags right after the cut belong to this chunk: the next one would hold an empty entity.
    while (stop < all.length && all[stop]!.kind === "close" && remaining.length > 0) {
      remaining.pop()
      stop++
    }
    const body = all.slice(start, stop).map((unit) => unit.text).join("")
    const closeTags = [...remaining].reverse().map((unit) => `</${unit.name}>`).join("")
    chunks.push(prefix + body + closeTags)
    open = remaining
    start = stop
  }
  return chunks.filter((chunk) => visibleText(chunk) !== "")
}

/** A chunk of the first character alone: only reached with a limit below two UTF-16 units. */
const forced = (all: ReadonlyArray<Unit>, start: number, open: ReadonlyArray<Extract<Unit, { kind: "open" }>>) => {
  const stack = [...open]
  let j = start
  for (; j < all.length; j++) {
    const unit = all[j]!
    if (unit.kind === "open") stack.push(unit)
    else if (unit.kind === "close") stack.pop()
    else break
  }
  return { end: Math.min(j + 1, all.length), stack }
}
