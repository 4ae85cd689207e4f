import { Effect } from "effect"
import { ImportError } from "./ImportError.js"
import { type ImportKind, importKinds } from "./ImportPlan.js"
import { looksLikeKernAi } from "./kernAi.js"
import { looksLikeOpenclaw } from "./openclaw.js"
import { looksLikeOpencode } from "./opencode.js"
import { entryIn } from "./sourceFiles.js"

const expected: Record<ImportKind, string> = {
  "kern-ai": "a kern-ai agent folder (.kern/sessions/ or .kern/recall.db beside AGENTS.md, notes/, …)",
  openclaw: "an OpenClaw folder (~/.openclaw with workspace/ and agents/<id>/sessions/, or a workspace with memory/ or MEMORY.md)",
  opencode: "an opencode export (the JSON `opencode export <sessionID>` prints, or a folder of them)"
}

const looks: Record<ImportKind, (root: string) => boolean> = {
  "kern-ai": looksLikeKernAi,
  openclaw: (root) => looksLikeOpenclaw(root) || entryIn(root, "sessions"),
  opencode: looksLikeOpencode
}

/**
 * The kind of source at `root` (its real path): the one asked for, if the source looks like it, else the one kind it
 * looks like. A kern agent folder is named as such (it is moved with backup and restore, not imported).
 */
export const detectKind = (root: string, source: string, asked: ImportKind | undefined): Effect.Effect<ImportKind, ImportError> =>
  Effect.suspend(() => {
    if (entryIn(root, ".kern/kern.db")) {
      return Effect.fail(new ImportError({
        reason: "wrong-kind",
        message: `${source} is a kern agent folder (it has .kern/kern.db): kern moves one with kern backup and kern restore, not import`
      }))
    }
    if (asked !== undefined) {
      return looks[asked](root)
        ? Effect.succeed(asked)
        : Effect.fail(new ImportError({ reason: "wrong-kind", message: `${source} is not ${expected[asked]}` }))
    }
    const found = importKinds.filter((kind) => looks[kind](root))
    if (found.length === 1) return Effect.succeed(found[0]!)
    if (found.length === 0) {
      return Effect.fail(new ImportError({
        reason: "unknown-kind",
        message: `${source} is none of what kern imports: ${importKinds.map((kind) => expected[kind]).join("; ")}`
      }))
    }
    return Effect.fail(new ImportError({
      reason: "ambiguous",
      message: `${source} could be ${found.join(" or ")}: name the kind, e.g. kern import ${found[0]} ${source}`
    }))
  })
