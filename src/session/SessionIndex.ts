import { Context, Effect, Either, Layer, Schema } from "effect"
import { parseJsonWith } from "../config/json.js"
import { createHash } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { AgentConfig } from "../config/AgentConfig.js"
import { privateModes } from "../storage/privateFiles.js"

/** What kern knows of a session file without reading it: its count, and the file's size and mtime at that count. */
export class SessionRecord extends Schema.Class<SessionRecord>("SessionRecord")({
  sessionId: Schema.String,
  createdAt: Schema.String,
  messages: Schema.Number,
  bytes: Schema.Number,
  mtimeMs: Schema.Number
}) {}

export class SessionIndexError extends Schema.TaggedError<SessionIndexError>()("SessionIndexError", {
  message: Schema.String
}) {}

export interface SessionIndexShape {
  readonly all: Effect.Effect<ReadonlyArray<SessionRecord>, SessionIndexError>
  readonly put: (record: SessionRecord) => Effect.Effect<void, SessionIndexError>
  readonly remove: (sessionId: string) => Effect.Effect<void, SessionIndexError>
}

/** The session index: counts for `kern sessions list` and status without parsing any session file. */
export class SessionIndex extends Context.Tag("kern/session/SessionIndex")<SessionIndex, SessionIndexShape>() {}

const suffix = ".json"

/** The record of session `sessionId` (`.kern/session-counts/<id>.json`). */
export const recordFile = (countsDir: string, sessionId: string) => NodePath.join(countsDir, `${sessionId}${suffix}`)

/** A record on disk: the counts and a check of them, which a record torn by a concurrent write or a crash fails. */
export const RecordJson = parseJsonWith(Schema.Struct({ ...SessionRecord.fields, check: Schema.String }).pipe(Schema.omit("sessionId")))
const decodeRecord = Schema.decodeUnknownEither(RecordJson)

type Counts = Omit<SessionRecord, "sessionId">

/**
 * A record's JSON as the Schema's encoding gives it (its fields in their order, then the check), written directly: a
 * record is written on every append, and encoding it through the Schema cost more than the write
 * (test/session/sessionIndex.test.ts holds the two equal).
 */
export const recordJson = (counts: Counts, check: string): string =>
  JSON.stringify({ createdAt: counts.createdAt, messages: counts.messages, bytes: counts.bytes, mtimeMs: counts.mtimeMs, check })

const checkOf = (counts: Counts): string =>
  createHash("sha256").update(`${counts.createdAt}\n${counts.messages}\n${counts.bytes}\n${counts.mtimeMs}`).digest("hex").slice(0, 16)

/** A record is written at this length (padded with spaces, which JSON allows), so a shorter one leaves no tail behind. */
const recordWidth = 256

const reason = (error: unknown) => (error instanceof Error ? error.message : String(error))

const isMissing = (error: unknown) => typeof error === "object" && error !== null && "code" in error && error.code === "ENOENT"

/**
 * Records as small files, one per session, so reading the counts needs neither kern.db nor SQLite (`kern sessions
 * list` starts in a fraction of the time). A record is rewritten in place on every append (a temporary file renamed
 * over it cost ~2 ms of CPU an append, most of a turn's file work), so a reader may meet one half written: each
 * carries a check of its counts, and one that fails it, like one that is missing or unreadable, is left out, and
 * SessionStore counts that session again from its file, as it does for a record that no longer matches the file's
 * size and mtime.
 */
export const make = (countsDir: string): SessionIndexShape => {
  const failed = (what: string) => (error: unknown) =>
    new SessionIndexError({ message: `could not ${what} the session counts in ${countsDir}: ${reason(error)}` })

  const readRecord = (name: string): SessionRecord | undefined => {
    const sessionId = name.slice(0, -suffix.length)
    let text: string
    try {
      text = NodeFs.readFileSync(NodePath.join(countsDir, name), "utf8")
    } catch (error) {
      if (isMissing(error)) return undefined
      throw error
    }
    const decoded = decodeRecord(text)
    if (Either.isLeft(decoded)) return undefined
    const { check, ...counts } = decoded.right
    return check === checkOf(counts) ? new SessionRecord({ sessionId, ...counts }) : undefined
  }

  /** Writes `text` over the record file in place (created when absent), cutting off any longer old content. */
  const writeInPlace = (file: string, text: string) => {
    const fd = NodeFs.openSync(file, NodeFs.constants.O_WRONLY | NodeFs.constants.O_CREAT, privateModes.file)
    try {
      const bytes = Buffer.from(text, "utf8")
      let offset = 0
      while (offset < bytes.length) offset += NodeFs.writeSync(fd, bytes, offset, bytes.length - offset, offset)
      if (NodeFs.fstatSync(fd).size > bytes.length) NodeFs.ftruncateSync(fd, bytes.length)
    } finally {
      NodeFs.closeSync(fd)
    }
  }

  const all = Effect.try({
    try: () => {
      let names: Array<string>
      try {
        names = NodeFs.readdirSync(countsDir)
      } catch (error) {
        if (isMissing(error)) return []
        throw error
      }
      return names.filter((name) => name.endsWith(suffix)).sort().flatMap((name) => readRecord(name) ?? [])
    },
    catch: failed("read")
  }).pipe(Effect.withSpan("kern.session.index.all"))

  const put = (record: SessionRecord) =>
    Effect.try({
      try: () => {
        const { sessionId, ...counts } = record
        const file = recordFile(countsDir, sessionId)
        const text = recordJson(counts, checkOf(counts)).padEnd(recordWidth)
        try {
          writeInPlace(file, text)
        } catch (error) {
          if (!isMissing(error)) throw error
          NodeFs.mkdirSync(countsDir, { recursive: true, mode: privateModes.dir })
          // Derived data, never the agent's history: the folder keeps itself out of git, whatever the folder's
          // own .gitignore (made by an older kern) says.
          NodeFs.writeFileSync(NodePath.join(countsDir, ".gitignore"), "*\n", { mode: privateModes.file })
          writeInPlace(file, text)
        }
      },
      catch: failed("write")
    })

  const remove = (sessionId: string) =>
    Effect.try({
      try: () => NodeFs.rmSync(recordFile(countsDir, sessionId), { force: true }),
      catch: failed("write")
    })

  return { all, put, remove }
}

/** The agent folder's index (`.kern/session-counts/<id>.json`). */
export const layer: Layer.Layer<SessionIndex, never, AgentConfig> = Layer.effect(
  SessionIndex,
  Effect.map(AgentConfig, ({ paths }) => SessionIndex.of(make(paths.sessionCountsDir)))
)
