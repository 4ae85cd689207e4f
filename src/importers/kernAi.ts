/**
 * A kern-ai agent folder (github.com/oguzbilgic/kern-ai, docs/architecture.md "File layout"): `.kern/sessions/*.jsonl`
 * (conversations, see kernAiMessages.ts), `.kern/recall.db` (its memory database, see kernAiRecallDb.ts), and the
 * memory files AGENTS.md, IDENTITY.md, KNOWLEDGE.md, USERS.md, `knowledge/` and `notes/` — the same layout as kern's,
 * so each memory file goes to the same path here. Its config and `.env` are never read.
 */
import { Clock, Effect, Either, Schema, type Scope } from "effect"
import * as NodePath from "node:path"
import { agentFileMaxBytes, inspectAgentFile } from "../storage/agentFiles.js"
import { ImportError } from "./ImportError.js"
import type { ImportPlan, MemorySource, SessionSource, Skipped } from "./ImportPlan.js"
import { convertKernAi, type KernAiLine } from "./kernAiMessages.js"
import { openRecallDb, type RecallDb } from "./kernAiRecallDb.js"
import { decodeOr, isRecord, jsonLines, makeNotes, timeOf } from "./sessionBuilder.js"
import { entryIn, fileIn, folderInside, listFiles, refusalText, sourceReader } from "./sourceFiles.js"

/** The largest session file read, and the most messages taken of one session in recall.db. */
export const maxSessionBytes = 64 * 1024 * 1024
const maxRecallRows = 200_000
/** The largest recall.db opened. */
const maxRecallDbBytes = 4 * 1024 * 1024 * 1024

const rootMemoryFiles = new Set(["AGENTS.md", "IDENTITY.md", "KNOWLEDGE.md", "USERS.md"])

const Meta = Schema.Struct({ id: Schema.optional(Schema.String), createdAt: Schema.optional(Schema.String) })
const decodeMeta = decodeOr(Meta)

/** Whether `root` looks like a kern-ai agent folder (and not a kern one, which has kern.db). */
export const looksLikeKernAi = (root: string): boolean =>
  !entryIn(root, ".kern/kern.db") && (entryIn(root, ".kern/recall.db") || entryIn(root, ".kern/sessions"))

const memoryOf = (root: string): { readonly memory: Array<MemorySource>; readonly skipped: Array<Skipped> } => {
  const read = sourceReader(root, agentFileMaxBytes, (rel) => rel)
  const memory: Array<MemorySource> = []
  const skipped: Array<Skipped> = []
  const top = listFiles(root, ".", (rel) => rootMemoryFiles.has(rel), { recursive: false })
  skipped.push(...top.skipped)
  for (const rel of top.files) memory.push({ label: rel, target: rel, read: read(rel) })
  for (const folder of ["knowledge", "notes"]) {
    const inside = folderInside(root, folder)
    if (Either.isLeft(inside)) {
      skipped.push(inside.left)
      continue
    }
    if (inside.right === undefined) continue
    const listed = listFiles(inside.right, folder, (rel) => rel.endsWith(".md"), { recursive: true })
    skipped.push(...listed.skipped)
    for (const rel of listed.files) memory.push({ label: `${folder}/${rel}`, target: `${folder}/${rel}`, read: read(`${folder}/${rel}`) })
  }
  return { memory, skipped }
}

const timesOf = (rows: ReadonlyArray<{ readonly msg_index: number; readonly timestamp: string | null }>) =>
  new Map(rows.flatMap((row) => {
    const ms = timeOf(row.timestamp)
    return ms === undefined ? [] : [[row.msg_index, ms] as const]
  }))

/** A recall.db row's message: its content is the message's string, or its parts as JSON. */
const rowMessage = (row: { readonly role: string; readonly content: string }): unknown => {
  if (row.content.startsWith("[")) {
    const lines = jsonLines(Buffer.from(row.content, "utf8"), makeNotes())
    const parts = lines[0]?.value
    if (lines.length === 1 && Array.isArray(parts) && parts.every((p) => isRecord(p) && typeof p["type"] === "string")) {
      return { role: row.role, content: parts }
    }
  }
  return { role: row.role, content: row.content }
}

/** What a kern-ai agent folder holds to import. */
export const planKernAi = (root: string): Effect.Effect<ImportPlan, ImportError, Scope.Scope> =>
  Effect.gen(function*() {
    if (entryIn(root, ".kern/kern.db")) {
      return yield* new ImportError({
        reason: "wrong-kind",
        message: `${root} is a kern agent folder (it has .kern/kern.db), not kern-ai's: move it with kern backup and kern restore`
      })
    }
    const skipped: Array<Skipped> = []
    const sessions: Array<SessionSource> = []
    const sessionsDir = folderInside(root, ".kern/sessions")
    if (Either.isLeft(sessionsDir)) skipped.push(sessionsDir.left)
    const dir = Either.getOrUndefined(sessionsDir)

    // recall.db: through the door first (a link out of the source, a hard link, a FIFO is not opened).
    let db: RecallDb | undefined
    const kernDir = folderInside(root, ".kern")
    if (Either.isLeft(kernDir)) skipped.push(kernDir.left)
    else if (kernDir.right !== undefined && entryIn(root, ".kern/recall.db")) {
      const real = kernDir.right
      const checked = yield* Effect.either(inspectAgentFile(NodePath.join(real, "recall.db"), { roots: [real], maxBytes: maxRecallDbBytes }))
      if (Either.isLeft(checked)) skipped.push({ what: ".kern/recall.db", why: refusalText(checked.left) })
      else {
        const opened = yield* Effect.either(openRecallDb(checked.right.path))
        if (Either.isLeft(opened)) skipped.push({ what: ".kern/recall.db", why: `could not be read as kern-ai's recall database: ${opened.left}` })
        else db = opened.right
      }
    }

    const withFiles = new Set<string>()
    if (dir !== undefined) {
      const listed = listFiles(dir, ".kern/sessions", (rel) => rel.endsWith(".jsonl"), { recursive: false })
      skipped.push(...listed.skipped)
      const read = sourceReader(dir, maxSessionBytes, (rel) => `.kern/sessions/${rel}`)
      for (const rel of listed.files) {
        const stem = rel.slice(0, -".jsonl".length)
        withFiles.add(stem)
        const label = `.kern/sessions/${rel}`
        sessions.push({
          sourceId: stem,
          label,
          load: Effect.gen(function*() {
            const notes = makeNotes()
            const lines = jsonLines(yield* read(rel), notes)
            const meta = lines[0] === undefined ? undefined : decodeMeta(lines[0].value)
            if (lines[0] === undefined || meta === undefined || (isRecord(lines[0].value) && "role" in lines[0].value)) {
              return yield* Effect.fail<Skipped>({ what: label, why: "not a kern-ai session (no metadata line first)" })
            }
            const sourceId = meta.id ?? stem
            const times = db === undefined ? new Map<number, number>() : timesOf(yield* db.rowsOf(stem, maxRecallRows).pipe(Effect.orElseSucceed(() => [])))
            const createdAtMs = timeOf(meta.createdAt) ?? [...times.values()][0] ?? (yield* Clock.currentTimeMillis)
            const entries: Array<KernAiLine> = lines.slice(1).map((line, i) => ({ value: line.value, timeMs: times.get(i) }))
            const messages = convertKernAi(entries, createdAtMs, notes)
            return { sourceId, createdAtMs, messages, notes: notes.lines() }
          })
        })
      }
    }
    // Conversations recall.db still holds whose session file is gone.
    if (db !== undefined) {
      const known = db
      for (const id of known.sessionIds.filter((id) => !withFiles.has(id))) {
        const label = `.kern/recall.db (session ${id})`
        sessions.push({
          sourceId: id,
          label,
          load: Effect.gen(function*() {
            const rows = yield* known.rowsOf(id, maxRecallRows).pipe(Effect.mapError((why): Skipped => ({ what: label, why })))
            const notes = makeNotes()
            notes.add("message taken from recall.db (the session file is gone)", rows.length)
            const times = timesOf(rows)
            const first = rows.map((r) => timeOf(r.timestamp)).find((ms) => ms !== undefined) ?? (yield* Clock.currentTimeMillis)
            const messages = convertKernAi(rows.map((row) => ({ value: rowMessage(row), timeMs: times.get(row.msg_index) })), first, notes)
            return { sourceId: id, createdAtMs: first, messages, notes: notes.lines() }
          })
        })
      }
    }
    const memory = memoryOf(root)
    return { kind: "kern-ai", source: root, sessions, memory: memory.memory, skipped: [...skipped, ...memory.skipped] } satisfies ImportPlan
  })
