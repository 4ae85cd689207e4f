import { Effect, Either, Schema, type Scope } from "effect"
import * as NodeWorker from "node:worker_threads"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import { describeUnknown } from "./failures.js"

/**
 * Where a model's regular expression runs. Most patterns run on V8's linear-time engine once they backtrack too
 * much (see regexGuard.ts), so they are safe on the main thread, which is the fast path. Those that engine cannot
 * run (backreferences, lookarounds, large counted repetitions such as `(a{1,30})+$`) may backtrack for hours and
 * cannot be interrupted on the thread that runs them: they run in a worker thread, which the caller's scope
 * terminates when the tool call ends or times out, while the runtime goes on serving.
 */

/** For each document, the 1-based numbers of its lines that match. */
export interface LineMatcher {
  readonly matchLines: (documents: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ReadonlyArray<number>>, ToolFailure>
}

/**
 * The numbers of the lines of `text` that `regex` matches; a line ends at `\n`, and a `\r` before it is not
 * part of it. It also runs in the worker, from its source text, so it uses nothing outside its body.
 */
export const matchingLines = (regex: RegExp, text: string): Array<number> => {
  const found: Array<number> = []
  let start = 0
  for (let number = 1; start <= text.length; number++) {
    let end = text.indexOf("\n", start)
    if (end < 0) end = text.length
    const line = text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end)
    regex.lastIndex = 0
    if (regex.test(line)) found.push(number)
    if (end === text.length) break
    start = end + 1
  }
  return found
}

/**
 * Whether V8 can run the pattern on its linear-time engine: it accepts the `l` flag only then. Without the flag
 * regexGuard.ts enables, every pattern is treated as unsafe and goes to a worker.
 */
export const runsInLinearTime = (source: string, flags: string): boolean => {
  try {
    new RegExp(source, `${flags}l`)
    return true
  } catch (error) {
    if (error instanceof SyntaxError) return false
    throw error
  }
}

// Plain JavaScript the worker evaluates, so it runs alike from the bundle, from tsx and from a bench bundle. A
// development transform may wrap functions in `__name(…)`; the worker defines it.
const workerSource = (): string =>
  [
    "const __name = (target) => target;",
    "const { parentPort, workerData } = require('node:worker_threads');",
    `const matchingLines = ${matchingLines.toString()};`,
    "const regex = new RegExp(workerData.source, workerData.flags);",
    "parentPort.on('message', (documents) => parentPort.postMessage(documents.map((text) => matchingLines(regex, text))));"
  ].join("\n")

const Hits = Schema.Array(Schema.Array(Schema.Number))

const inProcess = (regex: RegExp): LineMatcher => {
  // One scan of a whole document rules out most of them before splitting lines.
  const quick = new RegExp(regex.source, regex.flags.includes("m") ? regex.flags : `${regex.flags}m`)
  const match = (text: string): Array<number> => {
    quick.lastIndex = 0
    return quick.test(text) ? matchingLines(regex, text) : []
  }
  return { matchLines: (documents) => Effect.sync(() => documents.map(match)) }
}

const ask = (worker: NodeWorker.Worker, documents: ReadonlyArray<string>) =>
  Effect.async<unknown, ToolFailure>((resume) => {
    const done = () => {
      worker.off("message", onMessage)
      worker.off("error", onError)
      worker.off("exit", onExit)
    }
    const onMessage = (hits: unknown) => {
      done()
      resume(Effect.succeed(hits))
    }
    const onError = (error: Error) => {
      done()
      resume(Effect.fail(toolFailure("UNEXPECTED", `the regular expression worker failed: ${error.message}`)))
    }
    const onExit = (code: number) => {
      done()
      resume(Effect.fail(toolFailure("UNEXPECTED", `the regular expression worker exited with code ${code}`)))
    }
    worker.on("message", onMessage)
    worker.on("error", onError)
    worker.on("exit", onExit)
    worker.postMessage(documents)
    // Interrupted (the tool's timeout): stop the match where it is; nothing else can.
    return Effect.zipRight(Effect.sync(done), Effect.promise(() => worker.terminate()))
  })

const inWorker = (source: string, flags: string): Effect.Effect<LineMatcher, ToolFailure, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.try({
        try: () => new NodeWorker.Worker(workerSource(), { eval: true, workerData: { source, flags } }),
        catch: (error) => toolFailure("UNEXPECTED", `could not start a regular expression worker: ${describeUnknown(error)}`)
      }),
      (worker) => Effect.promise(() => worker.terminate())
    ),
    (worker): LineMatcher => ({
      matchLines: (documents) =>
        Effect.flatMap(
          ask(worker, documents),
          (hits) =>
            Effect.mapError(
              Schema.decodeUnknown(Hits)(hits),
              (error) => toolFailure("UNEXPECTED", `the regular expression worker answered oddly: ${error.message}`)
            )
        ).pipe(Effect.withSpan("kern.tools.regexWorker.match", { attributes: { documents: documents.length } }))
    })
  )

/**
 * A matcher for a pattern the caller has compiled (so it is valid): in process when V8's linear engine can run
 * it, in a worker thread of the caller's scope otherwise.
 */
export const lineMatcher = (regex: RegExp): Effect.Effect<LineMatcher, ToolFailure, Scope.Scope> =>
  runsInLinearTime(regex.source, regex.flags) ? Effect.succeed(inProcess(regex)) : inWorker(regex.source, regex.flags)

/** Compiles a model's pattern, or says why it is not one. */
export const compilePattern = (source: string, flags = ""): Either.Either<RegExp, string> =>
  Either.try({
    try: () => new RegExp(source, flags),
    catch: (error) => (error instanceof Error ? error.message : String(error))
  })
