/**
 * Long replies in several Slack messages. Slack takes ~40,000 characters of text, but a wall that long is unreadable
 * and is truncated by some clients: a reply is cut into chunks of at most `chunkLimit`, at a paragraph break if one
 * is in the second half of the window, else a line break, else a space; never inside a code block unless one block
 * alone is longer than a chunk, and then the block is closed at the cut and reopened in the next chunk.
 */

export const chunkLimit = 3900

const fence = "```"
const reopen = fence + "\n"
const close = "\n" + fence

/** A slice of the text; `reopened`/`closed` say a code block was cut before/after it (the chunk adds the fences). */
export interface Piece {
  readonly body: string
  readonly reopened: boolean
  readonly closed: boolean
}

const fencesIn = (text: string): number => text.split(fence).length - 1

/** The last cut in `(from, to]` at `separator` that `inCodeAt` says is outside code. */
const lastCut = (text: string, separator: string, from: number, to: number, inCodeAt: (cut: number) => boolean) => {
  for (let at = text.lastIndexOf(separator, to); at > from; at = text.lastIndexOf(separator, at - 1)) {
    if (!inCodeAt(at)) return at
  }
  return -1
}

/** A hard cut at `at`, moved back off a run of backticks (a fence) and off the middle of a surrogate pair. */
const safeHardCut = (text: string, at: number): number => {
  let cut = at
  while (cut > 1 && text[cut - 1] === "`" && text[cut] === "`") cut--
  const code = text.charCodeAt(cut - 1)
  if (cut > 1 && code >= 0xd800 && code <= 0xdbff) cut--
  return cut
}

export const splitPieces = (text: string, limit: number = chunkLimit): ReadonlyArray<Piece> => {
  const pieces: Array<Piece> = []
  let rest = text
  let inCode = false
  while (rest.length > 0) {
    const budget = limit - (inCode ? reopen.length : 0)
    if (rest.length <= budget) {
      pieces.push({ body: rest, reopened: inCode, closed: false })
      break
    }
    const startsInCode: boolean = inCode
    const inCodeAt = (cut: number): boolean => (fencesIn(rest.slice(0, cut)) + (startsInCode ? 1 : 0)) % 2 === 1
    const half = Math.floor(budget / 2)
    let cut = -1
    for (const [from, separator] of [[half, "\n\n"], [half, "\n"], [half, " "], [0, "\n\n"], [0, "\n"], [0, " "]] as const) {
      cut = lastCut(rest, separator, from, budget, inCodeAt)
      if (cut > 0) break
    }
    if (cut > 0) {
      pieces.push({ body: rest.slice(0, cut), reopened: inCode, closed: false })
      inCode = false
    } else {
      // Inside one code block longer than a chunk: cut at a line if there is one, closing and reopening the block.
      const room = budget - close.length
      const inside = (at: number) => at > 0 && inCodeAt(at)
      let line = -1
      for (let at = rest.lastIndexOf("\n", room); at > 0; at = rest.lastIndexOf("\n", at - 1)) {
        if (inside(at)) {
          line = at
          break
        }
      }
      cut = line > 0 ? line : safeHardCut(rest, room)
      const closes: boolean = inCodeAt(cut)
      pieces.push({ body: rest.slice(0, cut), reopened: inCode, closed: closes })
      inCode = closes
    }
    rest = rest.slice(cut)
  }
  return pieces
}

export const renderPiece = (piece: Piece): string =>
  (piece.reopened ? reopen : "") + piece.body + (piece.closed ? close : "")

/** The messages a reply is sent as: each at most `limit` characters, none empty. */
export const splitMessage = (text: string, limit: number = chunkLimit): ReadonlyArray<string> =>
  splitPieces(text, limit).map((piece) => renderPiece(piece).trim()).filter((chunk) => chunk !== "")
