// The o200k_base ranks as one flat table of bytes, for the token counter (bpeCount.ts). gpt-tokenizer ships them as a
// 2.2 MB JavaScript array of 200,000 strings, which it turns into a Map: evaluating the array and building the Map took
// ~0.35 s of CPU at every one-shot `kern chat`, the largest single cost of a chat. The build writes this table beside
// the bundles (dist/o200k_base.ranks, scripts/build.mjs); loading it is one file read and a few typed-array views.
// Where the file is not (kern run from its sources, the tests), the same table is built from gpt-tokenizer's array.

/** The ranks as gpt-tokenizer gives them: by rank, a token's text, or its bytes when they are not valid UTF-8. */
export type RankList = ReadonlyArray<string | ReadonlyArray<number> | undefined>

/**
 * Every token's bytes in one buffer (entry e is `bytes[starts[e], starts[e + 1])`), its rank, whether gpt-tokenizer
 * keys it by its bytes (`binary`: 1) or by its text (0), and an open-addressing hash of the entries by their bytes
 * (`slots`: an entry, or -1).
 */
export interface RankTable {
  readonly bytes: Uint8Array
  readonly starts: Uint32Array
  readonly ranks: Uint32Array
  readonly binary: Uint8Array
  readonly slots: Int32Array
}

/** FNV-1a over `bytes[from, to)`. */
export const hashBytes = (bytes: Uint8Array, from: number, to: number): number => {
  let hash = 0x811c9dc5
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193)
  return hash >>> 0
}

/**
 * Whether `bytes[from, to)` is UTF-8 as gpt-tokenizer judges it (utfUtil.js isValidUTF8: no overlong form, no
 * surrogate, nothing past U+10FFFF): it looks such bytes up by their text, any others by their bytes.
 */
export const isValidUtf8 = (bytes: Uint8Array, from: number, to: number): boolean => {
  let i = from
  while (i < to) {
    const first = bytes[i]!
    let size: number
    let codePoint: number
    if (first <= 0x7f) {
      i++
      continue
    } else if ((first & 0xe0) === 0xc0) {
      if (first <= 0xc1) return false
      size = 2
      codePoint = first & 0x1f
    } else if ((first & 0xf0) === 0xe0) {
      size = 3
      codePoint = first & 0x0f
    } else if ((first & 0xf8) === 0xf0) {
      if (first > 0xf4) return false
      size = 4
      codePoint = first & 0x07
    } else {
      return false
    }
    if (i + size > to) return false
    for (let j = 1; j < size; j++) {
      const next = bytes[i + j]!
      if ((next & 0xc0) !== 0x80) return false
      codePoint = (codePoint << 6) | (next & 0x3f)
    }
    if ((size === 2 && codePoint < 0x80) || (size === 3 && codePoint < 0x800) || (size === 4 && codePoint < 0x10000)) return false
    if ((codePoint >= 0xd800 && codePoint <= 0xdfff) || codePoint > 0x10ffff) return false
    i += size
  }
  return true
}

const encoder = new TextEncoder()

// With the `u` flag a surrogate pair is one code point past U+FFFF: only a lone surrogate is in this range.
const loneSurrogate = /[\uD800-\uDFFF]/u

/** Whether `text` holds no lone surrogate (String.prototype.isWellFormed, which ES2023's types lack). */
export const isWellFormed = (text: string): boolean => !loneSurrogate.test(text)

/**
 * The table of `list`, looked up as gpt-tokenizer looks its ranks up: a token given as text is found by text (of two
 * with the same text, its Map keeps the later rank), one given as bytes by bytes (bytes that are valid UTF-8 are looked
 * up by text, so gpt-tokenizer never finds such a rank, nor does this table). Refuses a list whose lookups this table
 * could not answer the same way: a text that is not well formed, the same bytes twice.
 */
export const buildRankTable = (list: RankList): RankTable => {
  const byKey = new Map<string, number>()
  const entries: Array<{ readonly key: Uint8Array; readonly rank: number; readonly binary: boolean }> = []
  list.forEach((value, rank) => {
    if (value === undefined) return
    const binary = typeof value !== "string"
    if (!binary && !isWellFormed(value)) throw new Error(`rank ${rank} is not well-formed text`)
    const key = binary ? Uint8Array.from(value) : encoder.encode(value)
    const id = `${binary ? "b" : "s"}${Buffer.from(key).toString("latin1")}`
    const known = byKey.get(id)
    if (known !== undefined) {
      if (binary) throw new Error(`rank ${rank} repeats the bytes of rank ${entries[known]!.rank}`)
      entries[known] = { key, rank, binary }
      return
    }
    byKey.set(id, entries.length)
    entries.push({ key, rank, binary })
  })
  const starts = new Uint32Array(entries.length + 1)
  let size = 0
  for (let e = 0; e < entries.length; e++) {
    starts[e] = size
    size += entries[e]!.key.length
  }
  starts[entries.length] = size
  const bytes = new Uint8Array(size)
  const ranks = new Uint32Array(entries.length)
  const binary = new Uint8Array(entries.length)
  let slotCount = 1
  while (slotCount < entries.length * 2) slotCount *= 2
  const slots = new Int32Array(slotCount).fill(-1)
  const mask = slotCount - 1
  for (let e = 0; e < entries.length; e++) {
    const entry = entries[e]!
    bytes.set(entry.key, starts[e]!)
    ranks[e] = entry.rank
    binary[e] = entry.binary ? 1 : 0
    let slot = hashBytes(entry.key, 0, entry.key.length) & mask
    while (slots[slot] !== -1) slot = (slot + 1) & mask
    slots[slot] = e
  }
  return { bytes, starts, ranks, binary, slots }
}

/**
 * The rank of the token whose bytes are `piece[from, to)`, looked up as text (`binary` 0) or as bytes (1); -1 when
 * there is none.
 */
export const rankOf = (table: RankTable, piece: Uint8Array, from: number, to: number, binary: 0 | 1): number => {
  const { bytes, slots, starts } = table
  const mask = slots.length - 1
  const length = to - from
  let slot = hashBytes(piece, from, to) & mask
  for (;;) {
    const e = slots[slot]!
    if (e === -1) return -1
    const start = starts[e]!
    if (starts[e + 1]! - start === length && table.binary[e] === binary) {
      let same = true
      for (let i = 0; i < length; i++) {
        if (bytes[start + i] !== piece[from + i]) {
          same = false
          break
        }
      }
      if (same) return table.ranks[e]!
    }
    slot = (slot + 1) & mask
  }
}

/** A check of the words of `buffer` from `from` (bytes, aligned) to its end: a damaged file is not read. */
const checkWords = (buffer: Uint8Array, from: number): number => {
  const words = new Uint32Array(buffer.buffer, buffer.byteOffset + from, (buffer.byteLength - from) / 4)
  let hash = 0x811c9dc5
  for (let i = 0; i < words.length; i++) hash = Math.imul(hash ^ words[i]!, 0x01000193)
  return hash >>> 0
}

/** The file's first bytes, then its version: a file of another layout is not read as this one. */
const magic = 0x4b524e4b
const version = 1
const headerWords = 6

/** The table as one buffer: a header (magic, version, entries, bytes, slots, a check), then the arrays, 4-byte aligned. */
export const serializeRankTable = (table: RankTable): Uint8Array => {
  const entries = table.ranks.length
  const padded = (n: number) => (n + 3) & ~3
  const total = headerWords * 4 + (entries + 1) * 4 + entries * 4 + table.slots.length * 4 + padded(entries) + padded(table.bytes.length)
  const out = new Uint8Array(total)
  const header = new Uint32Array(out.buffer, 0, headerWords)
  header.set([magic, version, entries, table.bytes.length, table.slots.length, 0])
  let at = headerWords * 4
  for (const part of [table.starts, table.ranks, table.slots]) {
    out.set(new Uint8Array(part.buffer, part.byteOffset, part.byteLength), at)
    at += part.byteLength
  }
  out.set(table.binary, at)
  at += padded(entries)
  out.set(table.bytes, at)
  header[5] = checkWords(out, headerWords * 4)
  return out
}

/** The table a buffer holds (views over a copy aligned to 4 bytes), or undefined when it is not one, or is damaged. */
export const deserializeRankTable = (file: Uint8Array): RankTable | undefined => {
  if (file.byteLength < headerWords * 4) return undefined
  const buffer = file.byteOffset % 4 === 0 ? file : Uint8Array.from(file)
  const header = new Uint32Array(buffer.buffer, buffer.byteOffset, headerWords)
  const [fileMagic, fileVersion, entries, size, slotCount, check] = header as unknown as [number, number, number, number, number, number]
  if (fileMagic !== magic || fileVersion !== version || slotCount === 0 || (slotCount & (slotCount - 1)) !== 0) return undefined
  const padded = (n: number) => (n + 3) & ~3
  const total = headerWords * 4 + (entries + 1) * 4 + entries * 4 + slotCount * 4 + padded(entries) + padded(size)
  if (buffer.byteLength !== total || checkWords(buffer, headerWords * 4) !== check) return undefined
  let at = buffer.byteOffset + headerWords * 4
  const view = <T>(make: (offset: number) => T, bytes: number): T => {
    const value = make(at)
    at += bytes
    return value
  }
  const starts = view((offset) => new Uint32Array(buffer.buffer, offset, entries + 1), (entries + 1) * 4)
  const ranks = view((offset) => new Uint32Array(buffer.buffer, offset, entries), entries * 4)
  const slots = view((offset) => new Int32Array(buffer.buffer, offset, slotCount), slotCount * 4)
  const binary = view((offset) => new Uint8Array(buffer.buffer, offset, entries), padded(entries))
  const bytes = new Uint8Array(buffer.buffer, at, size)
  if (starts[entries] !== size) return undefined
  return { bytes, starts, ranks, binary, slots }
}
