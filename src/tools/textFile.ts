/** Pure helpers for showing file contents to a model: binary detection, line splitting, numbering. */

const sniffBytes = 8192

/** A file is binary when its first 8 KB hold a NUL byte or mostly control bytes. */
export const isBinary = (bytes: Uint8Array): boolean => {
  const end = Math.min(bytes.byteLength, sniffBytes)
  let control = 0
  for (let i = 0; i < end; i++) {
    const byte = bytes[i] ?? 0
    if (byte === 0) return true
    if (byte < 7 || (byte > 13 && byte < 32 && byte !== 27)) control++
  }
  return end > 0 && control / end > 0.3
}

const signatures: ReadonlyArray<readonly [string, ReadonlyArray<number>]> = [
  ["PNG image", [0x89, 0x50, 0x4e, 0x47]],
  ["JPEG image", [0xff, 0xd8, 0xff]],
  ["GIF image", [0x47, 0x49, 0x46, 0x38]],
  ["PDF document", [0x25, 0x50, 0x44, 0x46]],
  ["ZIP archive (or docx/xlsx/jar)", [0x50, 0x4b, 0x03, 0x04]],
  ["gzip archive", [0x1f, 0x8b]],
  ["ELF executable", [0x7f, 0x45, 0x4c, 0x46]],
  ["WebAssembly module", [0x00, 0x61, 0x73, 0x6d]],
  ["SQLite database", [0x53, 0x51, 0x4c, 0x69, 0x74, 0x65]]
]

/** What kind of binary file this is, from its first bytes. */
export const binaryKind = (bytes: Uint8Array): string =>
  signatures.find(([, magic]) => magic.every((byte, i) => bytes[i] === byte))?.[0] ?? "binary data"

/** Lines without their terminators; a final newline does not make an extra empty line. */
export const splitLines = (text: string): Array<string> => {
  if (text === "") return []
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? ""
    if (line.endsWith("\r")) lines[i] = line.slice(0, -1)
  }
  return lines
}

export const maxLineChars = 2000

/** `  12\ttext`, the line cut at 2000 characters with a note. */
export const numberLine = (lineNumber: number, line: string, width: number): string => {
  const shown = line.length > maxLineChars
    ? `${line.slice(0, maxLineChars)}… [line cut: ${line.length} chars]`
    : line
  return `${String(lineNumber).padStart(width, " ")}\t${shown}`
}

export const byteLength = (text: string): number => Buffer.byteLength(text, "utf8")

export const formatBytes = (bytes: number): string =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`
