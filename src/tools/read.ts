import { FileSystem } from "@effect/platform"
import { Effect, Schema } from "effect"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import { listDirectory } from "./directoryListing.js"
import { readAgentFile } from "../storage/agentFiles.js"
import { agentFileFailure, fileFailure } from "./failures.js"
import { formatOutline, outlineOf } from "./outline.js"
import { snapshotOf } from "../storage/fileSnapshot.js"
import { ReadTracker } from "./ReadTracker.js"
import { binaryKind, formatBytes, isBinary, numberLine, splitLines } from "./textFile.js"
import type { ToolMetadata } from "./toolMetadata.js"
import { ToolSession } from "./ToolSession.js"
import { Workspace } from "./Workspace.js"
import { counted } from "../config/counted.js"
import * as NodeCrypto from "node:crypto"
import { imageSize } from "../media/imageSize.js"
import { pdfText } from "../media/pdfText.js"
import { imageReferenceLine, type ReadImage } from "../media/readImage.js"
import { sniff } from "../media/sniff.js"

/** Seed 000's default: a read shows up to 2000 lines. */
export const readDefaultLimit = 2000
/**
 * The default byte budget of a read: under the 12 KB above which a tool's output is compacted (seed 004), so a read
 * is never compacted into head and tail with its middle gone; it ends at a line instead and names the next offset.
 * So the bytes end a default read long before the seed's 2000 lines (which would be ~80 KB of code, compacted and
 * then cut by maxToolResultChars): the line limit is the ceiling, the byte limit the usual end, and both are named.
 */
export const readDefaultMaxBytes = 12_000

export const ReadArgs = Schema.Struct({
  path: Schema.String.annotations({ description: "File or directory to read, relative to the agent folder or absolute" }),
  offset: Schema.optionalWith(
    Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)).annotations({ description: "First line to show, 1-indexed" }),
    { default: () => 1 }
  ),
  limit: Schema.optionalWith(
    Schema.Int.pipe(Schema.between(1, 100_000)).annotations({
      description: `Most lines (or directory entries) to show (default ${readDefaultLimit}); maxBytes may stop a range sooner`
    }),
    { default: () => readDefaultLimit }
  ),
  mode: Schema.optional(
    Schema.Literal("preview", "outline", "range", "full").annotations({
      description: "preview: the first lines and an outline; outline: symbols with line numbers; range (default): " +
        "lines offset..offset+limit; full: the whole file (only up to 256 KB)"
    })
  ),
  maxBytes: Schema.optional(
    Schema.Int.pipe(Schema.between(256, 1_000_000)).annotations({
      description: `Most bytes of text to return (default ${readDefaultMaxBytes}, up to 1000000); whichever of limit and ` +
        "maxBytes is reached first ends the range, and the result says which and where to continue"
    })
  )
})
export type ReadArgs = typeof ReadArgs.Type

export const readTool: ToolMetadata = {
  toolId: "read",
  name: "Read",
  description: "Read a text file with numbered lines, or list a directory. A read returns at most limit lines " +
    `(default ${readDefaultLimit}) and at most maxBytes of text (default ${readDefaultMaxBytes}, a few hundred lines ` +
    "of code), whichever comes first; the result says which limit was reached and the offset to continue with. " +
    "Start with mode \"outline\" or \"preview\" for large files, then read exact ranges with " +
    "offset and limit. Binary files are described, not dumped. Files over 256 KB can only be read by range. " +
    "An image (PNG, JPEG, GIF, WebP, HEIC, …) is shown to you as an image when your model takes images; a PDF is " +
    "read as its text, page by page (--- page N --- lines), by offset and limit like a text file.",
  safetyClass: "READ_ONLY",
  idempotent: true,
  timeoutMs: 30_000,
  scope: "read"
}

export interface ReadOutput {
  readonly path: string
  readonly kind: "file" | "directory" | "binary" | "image"
  readonly totalLines?: number
  readonly startLine?: number
  readonly endLine?: number
  /** Where to continue reading, when the result stopped before the file ended. */
  readonly nextOffset?: number
  /** Which limit ended the range before the file did: `limit` lines or `maxBytes` of text. */
  readonly stoppedBy?: "lines" | "bytes"
  readonly text: string
  /** An image: where it is and the hash of what was read, for the turn's prompt to show it (src/media/promptMedia.ts). */
  readonly image?: ReadImage
}

/** Files larger than this are only served by range. */
export const fullReadMaxBytes = 256 * 1024
/** Larger files are not loaded at all: grep or bash (sed -n) reach into them. */
export const readMaxFileBytes = 64 * 1024 * 1024
const previewLines = 40

const numberedRange = (lines: ReadonlyArray<string>, first: number, last: number, budget: number) => {
  const width = String(Math.max(last, 1)).length
  const out: Array<string> = []
  let used = 0
  let line = first
  for (; line <= last; line++) {
    const text = numberLine(line, lines[line - 1] ?? "", width)
    if (out.length > 0 && used + text.length + 1 > budget) break
    out.push(text)
    used += text.length + 1
  }
  return { text: out.join("\n"), endLine: line - 1 }
}

/**
 * An image file, by its bytes (any format sharp decodes; an SVG is text): its size, and a reference the turn's prompt
 * shows it from; undefined when the bytes are no image.
 */
const readImage = (path: string, display: string, bytes: Uint8Array): Effect.Effect<ReadOutput | undefined> =>
  Effect.gen(function*() {
    const { mediaType } = yield* Effect.promise(() => sniff(bytes))
    if (!mediaType.startsWith("image/")) return undefined
    const size = yield* imageSize(bytes)
    if (size._tag === "Unreadable") {
      return { path: display, kind: "binary", text: `${display}: ${mediaType}, ${formatBytes(bytes.byteLength)}; it could not be read as an image (${size.detail})` } satisfies ReadOutput
    }
    const { width, height } = size
    const sha256 = NodeCrypto.createHash("sha256").update(bytes).digest("hex")
    const image: ReadImage = { file: path, name: display, sha256, mediaType, bytes: bytes.byteLength, width, height }
    return {
      path: display,
      kind: "image",
      text: `${display}: ${mediaType} image, ${width}×${height}, ${formatBytes(bytes.byteLength)}\n${imageReferenceLine(image)}`,
      image
    } satisfies ReadOutput
  })

/** The text a read of a PDF keeps at most (its pages past that are left out, and the result says so). */
export const readPdfChars = 1_000_000

/**
 * A PDF as its text, page by page (`--- page N ---` lines, src/media/pdfText.ts, read in a worker with caps), shown
 * as a text file is: numbered lines, offset and limit, maxBytes.
 */
const readPdf = (args: ReadArgs, path: string, display: string, bytes: Uint8Array): Effect.Effect<ReadOutput, ToolFailure> =>
  Effect.gen(function*() {
    const extracted = yield* Effect.either(pdfText(bytes, { maxChars: readPdfChars }))
    const about = `${display}: PDF, ${formatBytes(bytes.byteLength)}`
    if (extracted._tag === "Left") {
      return { path: display, kind: "binary", text: `${about}; its text could not be read (${extracted.left.message})` } satisfies ReadOutput
    }
    const { pages, text, truncated } = extracted.right
    const pagesText = counted(pages, "page")
    if (text === "") {
      return { path: display, kind: "binary", text: `${about}, ${pagesText}; it has no text layer (a scan?)` } satisfies ReadOutput
    }
    const read = yield* readFile(args, path, display, new TextEncoder().encode(text))
    const cut = truncated ? `; its text is cut at ${readPdfChars} characters or ${pagesText === "1 page" ? "its page" : "the pages read"}` : ""
    return { ...read, text: `[${about}, ${pagesText}: its text, page by page${cut}]\n${read.text}` }
  })

const readFile = (args: ReadArgs, path: string, display: string, bytes: Uint8Array): Effect.Effect<ReadOutput, ToolFailure> => {
  if (isBinary(bytes)) {
    return Effect.succeed({
      path: display,
      kind: "binary",
      text: `${display}: ${binaryKind(bytes)}, ${formatBytes(bytes.byteLength)} (${bytes.byteLength} bytes); binary content is not shown`
    })
  }
  const lines = splitLines(new TextDecoder("utf-8").decode(bytes))
  const total = lines.length
  const large = bytes.byteLength > fullReadMaxBytes
  if (args.mode === "full" && large) {
    return Effect.fail(toolFailure(
      "VALIDATION_ERROR",
      `${display} is ${formatBytes(bytes.byteLength)} (${counted(total, "line")}), over the 256 KB limit for a full read; ` +
        `use mode "outline" to find what you need, then read it with offset and limit`
    ))
  }
  if (args.mode === "outline") {
    const entries = outlineOf(path, lines)
    const text = entries === undefined
      ? `${display}: no outline for this file type (${counted(total, "line")}); use mode "preview" or read a range`
      : entries.length === 0
      ? `${display}: no symbols found (${counted(total, "line")})`
      : `${display} (${counted(total, "line")})\n${formatOutline(entries)}`
    return Effect.succeed({ path: display, kind: "file", totalLines: total, text })
  }
  if (total === 0) return Effect.succeed({ path: display, kind: "file", totalLines: 0, text: `${display} is empty` })
  if (args.offset > total) {
    return Effect.fail(toolFailure("VALIDATION_ERROR", `offset ${args.offset} is past the end of ${display} (${counted(total, "line")})`))
  }
  const budget = args.maxBytes ?? (args.mode === "full" ? fullReadMaxBytes * 2 : readDefaultMaxBytes)
  const last = args.mode === "full"
    ? total
    : Math.min(total, args.offset - 1 + (args.mode === "preview" ? Math.min(args.limit, previewLines) : args.limit))
  const first = args.mode === "full" ? 1 : args.offset
  const range = numberedRange(lines, first, last, budget)
  const notes: Array<string> = []
  if (args.mode === "preview") {
    const entries = outlineOf(path, lines)
    if (entries !== undefined && entries.length > 0) notes.push(`Outline:\n${formatOutline(entries.slice(0, 40))}`)
  }
  const nextOffset = range.endLine < total ? range.endLine + 1 : undefined
  const stoppedBy = range.endLine < last ? "bytes" as const : "lines" as const
  if (nextOffset !== undefined) {
    const [reached, figure] = stoppedBy === "bytes" ? ["byte", `maxBytes ${budget}`] : ["line", `limit ${last - first + 1}`]
    notes.push(`[lines ${first}–${range.endLine} of ${total}${large ? ` in a ${formatBytes(bytes.byteLength)} file` : ""}, ` +
      `${reached} limit reached: continue with offset ${nextOffset} (${figure})]`)
  }
  const text = [range.text, ...notes].join("\n\n")
  const base = { path: display, kind: "file" as const, totalLines: total, startLine: first, endLine: range.endLine, text }
  return Effect.succeed(nextOffset === undefined ? base : { ...base, nextOffset, stoppedBy })
}

/** Reads a file (numbered lines, outline or preview) or lists a directory; records what was read for write/edit. */
export const read = Effect.fn("kern.tools.read")(function*(args: ReadArgs) {
  const fs = yield* FileSystem.FileSystem
  const workspace = yield* Workspace
  const tracker = yield* ReadTracker
  const { sessionId } = yield* ToolSession
  const file = yield* workspace.resolve(args.path)
  const info = yield* fs.stat(file.path).pipe(Effect.mapError(fileFailure(args.path)))
  if (info.type === "Directory") {
    const listing = yield* listDirectory(file.path, file.display, args.offset, args.limit)
    return { path: file.display, kind: "directory", text: listing } satisfies ReadOutput
  }
  // Through the door: a hard link (perhaps to .kern/.env), a FIFO or a device is refused, a FIFO without blocking.
  const { bytes } = yield* readAgentFile(file.path, workspace.fileOptions(file, readMaxFileBytes)).pipe(
    Effect.mapError((error) =>
      error.reason === "too-large"
        ? toolFailure(
          "VALIDATION_ERROR",
          `${file.display} is ${formatBytes(Number(info.size))}, too large to read; search it with grep or show parts with bash (sed -n, head, tail)`
        )
        : agentFileFailure(error)
    )
  )
  yield* tracker.record(sessionId, file.path, snapshotOf(bytes))
  if (binaryKind(bytes) === "PDF document") return yield* readPdf(args, file.path, file.display, bytes)
  const image = isBinary(bytes) ? yield* readImage(file.path, file.display, bytes) : undefined
  return image ?? (yield* readFile(args, file.path, file.display, bytes))
}) satisfies (args: ReadArgs) => Effect.Effect<ReadOutput, ToolFailure, FileSystem.FileSystem | Workspace | ReadTracker | ToolSession>
