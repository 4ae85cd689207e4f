// What a cold sample of session.load.* runs, in a fresh node process (session.bench.ts): bundled as kern's own bundles
// are (scripts/esbuild-options.mjs `cachedScript`) and loaded as bin/kern.js loads them (bin/codeCache.js), so that the
// open is timed as a user's `kern` process runs it, and the floor beside it the same way.
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import { type ColdWindow, timeColdWindow } from "./coldWindow.js"
import { storeLayer } from "./fixtures.js"

/** The plain way to read a JSONL file: the whole file as a string, JSON.parse of every line. */
const readAndParse = (path: string) => {
  const text = NodeFs.readFileSync(path, "utf8")
  let count = 0
  for (const line of text.split("\n")) {
    if (line !== "") {
      JSON.parse(line)
      count++
    }
  }
  return count
}

/**
 * Opening a session as a user's `kern` process does on the first open (or after kern.db is lost): build the layer
 * (kern.db, its migrations, the context), open the newest session (stream and decode the file, repair, record its
 * count, build the in-memory history and prompt).
 */
export const openCold = async (dir: string, messages: number): Promise<ColdWindow> => {
  let loaded = -1
  const window = await timeColdWindow(async () => {
    loaded = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(storeLayer(dir))
      const { session } = yield* Effect.scoped(openActiveSession()).pipe(Effect.provide(context))
      return yield* session.history.size
    })))
  })
  if (loaded !== messages) throw new Error(`loaded ${loaded} messages of a ${messages}-message session`)
  return window
}

/** The floor, timed the same way: read the file and JSON.parse every line. */
export const parseCold = async (path: string, messages: number): Promise<ColdWindow> => {
  let lines = -1
  const window = await timeColdWindow(() => {
    lines = readAndParse(path)
  })
  if (lines !== messages + 1) throw new Error(`parsed ${lines} lines of a ${messages}-message session`)
  return window
}
