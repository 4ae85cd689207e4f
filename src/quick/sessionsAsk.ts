// `kern sessions list` answered from the listing the last ask kept (dist/quickSessionsAsk.cjs, loaded by bin/kern.js
// before the listing's own bundle): while nothing the listing read has changed (src/quick/sessionsCache.ts), its
// output is printed again without loading Effect, the schemas or the listing's code. Anything else (a command line
// it does not parse for sure, no kept output under the folder's key) is left to dist/quick.cjs.
import * as NodePath from "node:path"
import { keptIn } from "./keptOutputs.js"
import { printOutput } from "./printOutput.js"
import { listWords } from "./sessionsArgs.js"
import { sessionsCacheFile, sessionsKey } from "./sessionsCache.js"

/** Prints the kept listing when `kern <argv>` is a listing one is kept for, and says whether it did. */
export const run = (argv: ReadonlyArray<string>): boolean => {
  if (argv[0] !== "sessions" || argv[1] !== "list" || typeof __dirname !== "string") return false
  const words = listWords(argv.slice(2))
  if (words === undefined) return false
  const dir = words.dir ?? words.dirFlag ?? "."
  const nowMs = Date.now()
  const key = sessionsKey(
    { dir, json: words.json, conversation: words.conversation, env: process.env, bundle: NodePath.join(__dirname, "quick.cjs") },
    nowMs
  )
  const kept = keptIn(sessionsCacheFile(dir), key, nowMs)
  if (kept === undefined) return false
  printOutput(kept)
  return true
}
