/**
 * opencode session exports: a file written by `opencode export <sessionID> > FILE.json`, or a folder of them (each
 * `*.json` in it). The format is in opencodeMessages.ts. The session's own id (`ses_…`) says whether it was imported.
 */
import { Clock, Effect, Either, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { ImportError } from "./ImportError.js"
import type { ImportPlan, SessionSource, Skipped } from "./ImportPlan.js"
import { maxSessionBytes } from "./kernAi.js"
import { convertOpencode, OpencodeExport } from "./opencodeMessages.js"
import { jsonFile, makeNotes, timeOf } from "./sessionBuilder.js"
import { listFiles, sourceReader } from "./sourceFiles.js"

const decodeExport = Schema.decodeUnknownEither(OpencodeExport)

const openclawMarkers: ReadonlySet<string> = new Set(["openclaw.json", "agents", "workspace", "memory", ".kern"])

/** Whether `path` (real) is a file or a folder that holds JSON files (an export or several). */
export const looksLikeOpencode = (path: string): boolean => {
  try {
    const stat = NodeFs.statSync(path)
    if (stat.isFile()) return path.endsWith(".json")
    if (!stat.isDirectory()) return false
    const names = NodeFs.readdirSync(path)
    // An OpenClaw state folder holds JSON too (openclaw.json); a folder of exports holds nothing of OpenClaw's.
    return names.some((name) => name.endsWith(".json")) && !names.some((name) => openclawMarkers.has(name))
  } catch {
    return false
  }
}

const exportSource = (dir: string, rel: string, label: string): SessionSource => {
  const read = sourceReader(dir, maxSessionBytes, () => label)
  return {
    sourceId: rel,
    label,
    load: Effect.gen(function*() {
      const parsed = jsonFile(yield* read(rel))
      if (Either.isLeft(parsed)) return yield* Effect.fail<Skipped>({ what: label, why: `not JSON: ${parsed.left}` })
      const decoded = decodeExport(parsed.right)
      if (Either.isLeft(decoded)) {
        return yield* Effect.fail<Skipped>({ what: label, why: "not an opencode session export (no info.id and messages)" })
      }
      const exported = decoded.right
      const notes = makeNotes()
      const createdAtMs = timeOf(exported.info.time?.created) ?? (yield* Clock.currentTimeMillis)
      const messages = convertOpencode(exported, createdAtMs, notes)
      return { sourceId: exported.info.id, title: exported.info.title, createdAtMs, messages, notes: notes.lines() }
    })
  }
}

/** The export (or exports) at `path` (real). */
export const planOpencode = (path: string): Effect.Effect<ImportPlan, ImportError> =>
  Effect.suspend(() => {
    let stat: NodeFs.Stats
    try {
      stat = NodeFs.statSync(path)
    } catch (error) {
      return Effect.fail(new ImportError({ reason: "missing", message: `${path} cannot be read: ${String(error)}` }))
    }
    if (stat.isFile()) {
      const plan: ImportPlan = {
        kind: "opencode",
        source: path,
        sessions: [exportSource(NodePath.dirname(path), NodePath.basename(path), NodePath.basename(path))],
        memory: [],
        skipped: []
      }
      return Effect.succeed(plan)
    }
    const listed = listFiles(path, ".", (rel) => rel.endsWith(".json"), { recursive: false })
    return Effect.succeed<ImportPlan>({
      kind: "opencode",
      source: path,
      sessions: listed.files.map((rel) => exportSource(path, rel, rel)),
      memory: [],
      skipped: listed.skipped
    })
  })
