import { Duration, Effect, Schema } from "effect"
import { createRequire } from "node:module"
import * as NodeWorker from "node:worker_threads"

/**
 * A PDF's text, read with unpdf (PDF.js) in a worker thread. A PDF is hostile input: a "bomb" of thousands of pages
 * or of huge objects would hold the thread that parses it for seconds and grow its heap without bound. So PDF.js
 * never runs on the runtime's thread: a worker of its own per PDF, with a heap cap (the worker dies, not the agent),
 * a page cap, and a time limit after which the worker is terminated wherever it is. The runtime's event loop only
 * posts the bytes and waits.
 */

/** Why a PDF's text could not be read: not a PDF PDF.js can open, too slow, or too large to hold. */
export class PdfUnreadable extends Schema.TaggedError<PdfUnreadable>()("PdfUnreadable", {
  reason: Schema.Literal("invalid", "timeout", "too-large", "worker"),
  message: Schema.String
}) {}

export interface PdfText {
  /** The PDF's page count, as its page tree says. */
  readonly pages: number
  /** The text of the pages read, each after a `--- page N ---` line; empty when no page has a text layer. */
  readonly text: string
  /** Whether pages or characters were left out (the caps). */
  readonly truncated: boolean
}

/** Pages read at most; the rest of a longer PDF is left out (`truncated`). */
export const maxPdfPages = 500
/** How long one PDF may take before its worker is stopped (with the pages read by then kept). */
export const pdfTimeout = Duration.seconds(20)
/** The worker's heap cap: a PDF that needs more is refused, the agent's own heap is untouched. */
const heapMegabytes = 256

// Plain JavaScript the worker evaluates, so it runs alike from the bundle, from tsx and under vitest (a file of its
// own would need a build step of its own). unpdf's CommonJS entry is resolved here, where kern's node_modules are.
// It posts the page count, then each page's text as it is read, so what was read before the time limit is kept.
const workerSource = [
  "const { parentPort, workerData } = require('node:worker_threads');",
  "(async () => {",
  "  const { getDocumentProxy } = require(workerData.unpdf);",
  "  const pdf = await getDocumentProxy(workerData.bytes, { stopAtErrors: false, isOffscreenCanvasSupported: false });",
  "  parentPort.postMessage({ type: 'open', pages: pdf.numPages });",
  "  const last = Math.min(pdf.numPages, workerData.maxPages);",
  "  let chars = 0;",
  "  for (let number = 1; number <= last && chars < workerData.maxChars; number++) {",
  "    const page = await pdf.getPage(number);",
  "    const content = await page.getTextContent();",
  "    const text = content.items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\\n' : '') : '')).join('').trim();",
  "    page.cleanup();",
  "    chars += text.length;",
  "    parentPort.postMessage({ type: 'page', number, text });",
  "  }",
  "  parentPort.postMessage({ type: 'done' });",
  "})().catch((error) => parentPort.postMessage({ type: 'failed', message: String((error && error.message) || error) }));"
].join("\n")

const Message = Schema.Union(
  Schema.Struct({ type: Schema.Literal("open"), pages: Schema.Number }),
  Schema.Struct({ type: Schema.Literal("page"), number: Schema.Number, text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("done") }),
  Schema.Struct({ type: Schema.Literal("failed"), message: Schema.String })
)
const decodeMessage = Schema.decodeUnknownEither(Message)

const unpdfEntry = () => createRequire(import.meta.url).resolve("unpdf")

const start = (bytes: Uint8Array, maxChars: number, maxPages: number) =>
  Effect.try({
    try: () =>
      new NodeWorker.Worker(workerSource, {
        eval: true,
        workerData: { unpdf: unpdfEntry(), bytes, maxChars, maxPages },
        resourceLimits: { maxOldGenerationSizeMb: heapMegabytes, maxYoungGenerationSizeMb: 32 },
        stdout: true,
        stderr: true
      }),
    catch: (error) =>
      new PdfUnreadable({ reason: "worker", message: `could not start a PDF reader: ${error instanceof Error ? error.message : String(error)}` })
  })

/** What the worker has said so far: the page count once the PDF opened, and each page read. */
interface Progress {
  pages: number | undefined
  readonly parts: Array<{ readonly number: number; readonly text: string }>
}

/** Waits for the worker to finish, recording its pages into `progress` as they come. */
const read = (worker: NodeWorker.Worker, progress: Progress) =>
  Effect.async<void, PdfUnreadable>((resume) => {
    worker.on("message", (raw: unknown) => {
      const message = decodeMessage(raw)
      if (message._tag === "Left") {
        return resume(Effect.fail(new PdfUnreadable({ reason: "worker", message: "the PDF reader answered oddly" })))
      }
      const said = message.right
      if (said.type === "open") progress.pages = said.pages
      else if (said.type === "page") progress.parts.push({ number: said.number, text: said.text })
      else if (said.type === "done") resume(Effect.void)
      else resume(Effect.fail(new PdfUnreadable({ reason: "invalid", message: said.message })))
    })
    worker.once("error", (error: Error & { readonly code?: string }) =>
      resume(Effect.fail(
        error.code === "ERR_WORKER_OUT_OF_MEMORY"
          ? new PdfUnreadable({ reason: "too-large", message: `reading it needed more than ${heapMegabytes} MB` })
          : new PdfUnreadable({ reason: "worker", message: `the PDF reader failed: ${error.message}` })
      ))
    )
    worker.once("exit", (code) =>
      resume(Effect.fail(new PdfUnreadable({ reason: "worker", message: `the PDF reader exited with code ${code}` })))
    )
  })

/** The pages read, each after its `--- page N ---` line, cut at `maxChars`. */
const assemble = (progress: Progress, pages: number, maxChars: number, stoppedEarly: boolean): PdfText => {
  const parts = progress.parts.filter((part) => part.text.length > 0).map((part) => `--- page ${part.number} ---\n${part.text}\n`)
  const whole = parts.join("\n")
  const lastRead = progress.parts.at(-1)?.number ?? 0
  return {
    pages,
    text: whole.slice(0, maxChars),
    truncated: stoppedEarly || whole.length > maxChars || lastRead < pages
  }
}

export interface PdfTextOptions {
  /** Characters of text kept at most. */
  readonly maxChars: number
  /** Pages read at most (default maxPdfPages). */
  readonly maxPages?: number
  /** How long reading may take (default pdfTimeout); the pages read by then are kept. */
  readonly timeout?: Duration.DurationInput
}

/**
 * The text of a PDF, page-numbered (`--- page 3 ---`), at most `maxChars` characters and `maxPages` pages, read in a
 * worker thread that is terminated after `timeout` (the pages read by then are returned, `truncated`). Fails with
 * PdfUnreadable when PDF.js cannot open it, when it needs more heap than the worker has, or when it cannot even be
 * opened in time.
 */
export const pdfText = (bytes: Uint8Array, options: PdfTextOptions): Effect.Effect<PdfText, PdfUnreadable> => {
  const timeout = Duration.decode(options.timeout ?? pdfTimeout)
  return Effect.acquireUseRelease(
    start(bytes, options.maxChars, options.maxPages ?? maxPdfPages),
    (worker) =>
      Effect.gen(function*() {
        const progress: Progress = { pages: undefined, parts: [] }
        const finished = yield* read(worker, progress).pipe(Effect.as(true), Effect.timeoutTo({
          duration: timeout,
          onSuccess: (done) => done,
          onTimeout: () => false
        }))
        if (progress.pages === undefined) {
          return yield* new PdfUnreadable({ reason: "timeout", message: `it could not be opened within ${Duration.format(timeout)}` })
        }
        return assemble(progress, progress.pages, options.maxChars, !finished)
      }),
    (worker) => Effect.promise(() => worker.terminate())
  ).pipe(Effect.withSpan("kern.media.pdfText", { attributes: { bytes: bytes.length } }))
}
