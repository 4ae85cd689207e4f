import { FileSystem } from "@effect/platform"
import { Clock, DateTime, Effect, Either, Option, Random, Ref, Schema, type Scope } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { AgentConfig } from "../config/AgentConfig.js"
import { KnownSecrets } from "../config/KnownSecrets.js"
import { diskFullText, isDiskFull } from "../storage/diskFull.js"
import { encodeSessionLine } from "./lineEncode.js"
import { SessionHeader, type SessionLine, type SessionMessage } from "./messages.js"
import type { NotASession, ParsedSession } from "./parse.js"
import { type ReadFrom, readSession, readSessionFrom } from "./readSession.js"
import { redactMessage } from "./redactMessage.js"
import { SessionIndex, SessionRecord } from "./SessionIndex.js"
import { privateModes } from "../storage/privateFiles.js"
import { mainConversation } from "../kernel/Audience.js"
import { conversationOfSession, sessionIdIn } from "./conversationIds.js"

export class SessionError extends Schema.TaggedError<SessionError>()("SessionError", {
  sessionId: Schema.String,
  message: Schema.String,
  /** Set when the write failed for want of space (ENOSPC, EDQUOT): the session is as it was before the write. */
  reason: Schema.optional(Schema.Literal("disk-full"))
}) {}

export interface SessionSummary {
  readonly id: string
  readonly createdAt: string
  readonly messages: number
  readonly bytes: number
  readonly updatedAt: string
  /** The newest session of its conversation: the one its turns write to. */
  readonly active: boolean
  /** The conversation it belongs to (`main`: the operator's), from its id (conversationIds.ts). */
  readonly conversation: string
}

/**
 * An open session: appends go straight to the file, one line per message, so a crash loses nothing appended. A known
 * secret in a message is written as `[redacted:NAME]`.
 */
export interface SessionWriter {
  readonly id: string
  readonly path: string
  readonly append: (message: SessionMessage) => Effect.Effect<void, SessionError>
  /** Message lines and bytes in the file now. */
  readonly stats: Effect.Effect<{ readonly messages: number; readonly bytes: number }>
}

/** The session a runtime writes to, as opened: the file repaired, or set aside and a new one started. */
export interface OpenedSession {
  readonly writer: SessionWriter
  readonly loaded: LoadedSession
  /** What was repaired or set aside, in words for the operator. */
  readonly problems: ReadonlyArray<string>
}

export interface LoadedSession extends ParsedSession {
  readonly id: string
  readonly path: string
}

export const lineOf = (line: SessionLine) => `${encodeSessionLine(line)}\n`

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

const stamp = (ms: number): string => {
  const d = new Date(ms)
  return `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}-${pad(d.getUTCHours())}${
    pad(d.getUTCMinutes())
  }${pad(d.getUTCSeconds())}-${pad(d.getUTCMilliseconds(), 3)}`
}

/**
 * Session ids sort by creation time, `YYYYMMDD-HHMMSS-mmm-<4 hex>` (UTC), and always after `newest`: two sessions
 * made in the same millisecond still sort in the order they were made, so the newest is the active one.
 */
const newId = (newest: string | undefined) =>
  Effect.gen(function*() {
    let ms = yield* Clock.currentTimeMillis
    while (newest !== undefined && stamp(ms) <= newest.slice(0, 19)) ms++
    const suffix = (yield* Random.nextIntBetween(0, 0x10000)).toString(16).padStart(4, "0")
    return `${stamp(ms)}-${suffix}`
  })

const asMessage = (error: unknown) => ({ message: error instanceof Error ? error.message : String(error) })

/** write(2) until every byte of the line is out (a file write may be short). */
const writeAllSync = (fd: number, bytes: Buffer): void => {
  let offset = 0
  while (offset < bytes.length) offset += NodeFs.writeSync(fd, bytes, offset, bytes.length - offset)
}

/** The offset just past the last newline before `size` (0 when there is none): where the file's last whole line ends. */
const lastLineEndSync = (fd: number, size: number): number => {
  const chunk = Buffer.alloc(64 * 1024)
  let end = size
  while (end > 0) {
    const start = Math.max(0, end - chunk.length)
    const read = NodeFs.readSync(fd, chunk, 0, end - start, start)
    const newline = chunk.subarray(0, read).lastIndexOf(0x0a)
    if (newline !== -1) return start + newline + 1
    end = start
  }
  return 0
}

/**
 * Before an append: the file's size, with a torn last line (another program cut the file mid-line, or a write of
 * ours was cut short and could not be undone) cut off, so the new line never glues onto half of another. The torn
 * bytes are no message kern acknowledged: the line they belonged to was already lost. Returns the bytes cut off.
 */
const repairTailSync = (fd: number, expected: number): { readonly size: number; readonly torn: number } => {
  const size = NodeFs.fstatSync(fd).size
  if (size === expected || size === 0) return { size, torn: 0 }
  const last = Buffer.alloc(1)
  NodeFs.readSync(fd, last, 0, 1, size - 1)
  if (last[0] === 0x0a) return { size, torn: 0 }
  const end = lastLineEndSync(fd, size)
  NodeFs.ftruncateSync(fd, end)
  return { size: end, torn: size - end }
}

const idPattern = /^[A-Za-z0-9._-]+$/

/** The agent's conversations as append-only JSONL files in `.kern/sessions/`; their counts in `.kern/session-counts/`. */
export class SessionStore extends Effect.Service<SessionStore>()("kern/session/SessionStore", {
  effect: Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const index = yield* SessionIndex
    const { config, paths } = yield* AgentConfig
    const { secrets } = yield* KnownSecrets
    const dir = paths.sessionsDir
    const fileOf = (id: string) => NodePath.join(dir, `${id}.jsonl`)
    const fail = (sessionId: string, what: string) => (error: { readonly message: string }) =>
      new SessionError({ sessionId, message: `${what}: ${error.message}` })

    const ids = Effect.gen(function*() {
      if (!(yield* fs.exists(dir))) return [] as Array<string>
      const names = yield* fs.readDirectory(dir)
      return names.filter((name) => name.endsWith(".jsonl")).map((name) => name.slice(0, -6)).sort()
    }).pipe(Effect.mapError(fail("*", `could not list ${dir}`)))

    /** The newest session of `conversation`, if any. */
    const activeIdIn = (conversation: string) =>
      Effect.map(ids, (all) => Option.fromNullable(all.findLast((id) => conversationOfSession(id) === conversation)))

    /** The newest session of the operator's conversation, if any. */
    const activeId = activeIdIn(mainConversation)

    /** The index is a cache of the files: when it cannot be written, the files still hold the truth. */
    const record = (entry: SessionRecord) =>
      index.put(entry).pipe(Effect.catchTag("SessionIndexError", (error) => Effect.logWarning(`kern: ${error.message}`)))

    /** Size and mtime (whole milliseconds, as every stat reports them) of a session file. */
    const fileStamp = (id: string, path: string) =>
      Effect.map(
        fs.stat(path).pipe(Effect.mapError(fail(id, `could not inspect ${path}`))),
        (info) => ({ bytes: Number(info.size), mtimeMs: Option.getOrElse(info.mtime, () => new Date(0)).getTime() })
      )

    const read = (id: string, from?: ReadFrom) =>
      Effect.gen(function*() {
        if (!idPattern.test(id)) return yield* new SessionError({ sessionId: id, message: `"${id}" is not a session id` })
        const path = fileOf(id)
        if (!(yield* fs.exists(path).pipe(Effect.mapError(fail(id, "could not inspect the session"))))) {
          return yield* new SessionError({ sessionId: id, message: `no session "${id}" in ${dir}` })
        }
        const fromCut = from === undefined ? Option.none() : yield* readSessionFrom(path, `${id}.jsonl`, from).pipe(
          Effect.mapError(fail(id, `could not read ${path}`))
        )
        const parsed: Either.Either<ParsedSession, NotASession> = Option.isSome(fromCut)
          ? Either.right(fromCut.value)
          : yield* readSession(path, `${id}.jsonl`).pipe(Effect.mapError(fail(id, `could not read ${path}`)))
        return { path, parsed }
      }).pipe(Effect.withSpan("kern.session.load", { attributes: { sessionId: id } }))

    /** Reads a session (from its context cut on, given `from` and when the file still matches it). */
    const load = (id: string, from?: ReadFrom) =>
      Effect.flatMap(read(id, from), ({ parsed, path }) =>
        Either.isLeft(parsed)
          ? new SessionError({ sessionId: id, message: parsed.left.message })
          : Effect.succeed({ ...parsed.right, id, path } satisfies LoadedSession))

    /**
     * Appends are one synchronous write(2) of a whole line each: when `append` returns the line is in the OS, so a
     * killed process loses nothing it appended, and a line is never interleaved or half-buffered in this process.
     * Each append also moves the session's count record. The descriptor closes with the scope, after an fsync.
     */
    const writerFor = (
      id: string,
      path: string,
      start: { readonly createdAt: string; readonly messages: number; readonly bytes: number }
    ): Effect.Effect<SessionWriter, SessionError, Scope.Scope> =>
      Effect.gen(function*() {
        const stats = yield* Ref.make({ messages: start.messages, bytes: start.bytes })
        // Read and write: a torn tail is found by reading the file's end.
        const fd = yield* Effect.acquireRelease(
          Effect.try({ try: () => NodeFs.openSync(path, "a+"), catch: (error) => fail(id, `could not open ${path}`)(asMessage(error)) }),
          (fd) =>
            Effect.flatMap(Ref.get(stats), (now) =>
              Effect.sync(() => {
                // An fsync costs milliseconds: only a session that was written to needs one.
                if (now.bytes !== start.bytes) NodeFs.fsyncSync(fd)
                NodeFs.closeSync(fd)
              })).pipe(Effect.ignoreLogged)
        )
        /**
         * A failed write is undone: the file is cut back to where the line started, so what is in the file is only
         * whole lines (a write cut short by a full disk leaves half a line otherwise, and the next line glues onto it).
         */
        const writeLine = (line: Buffer, goodEnd: number) =>
          Effect.try({
            try: () => {
              writeAllSync(fd, line)
              // In whole milliseconds as Node's Date has them (rounded), which is how a list stats the file: a
              // floor would miss it half the time, and the session would be counted again from its file.
              return NodeFs.fstatSync(fd).mtime.getTime()
            },
            catch: (error) => error
          }).pipe(Effect.catchAll((error) => {
            const failure = isDiskFull(error)
              ? new SessionError({
                sessionId: id,
                reason: "disk-full",
                message: `could not append to ${path}: ${diskFullText}; the message was not recorded: free some space and send it again`
              })
              : fail(id, `could not append to ${path}`)(asMessage(error))
            // When even the cut fails, the next append finds the torn line and cuts it then.
            return Effect.zipRight(
              Effect.try(() => NodeFs.ftruncateSync(fd, goodEnd)).pipe(
                Effect.catchAll((cut) => Effect.logWarning(`kern: could not cut ${path} back after a failed write: ${asMessage(cut).message}`))
              ),
              Effect.fail(failure)
            )
          }))
        const append = (message: SessionMessage) =>
          Effect.gen(function*() {
            // The one door to the file: no known secret is written, whoever wrote it (user, model, tool).
            const line = Buffer.from(lineOf(redactMessage(message, secrets)), "utf8")
            const before = yield* Ref.get(stats)
            const tail = yield* Effect.try({
              try: () => repairTailSync(fd, before.bytes),
              catch: (error) => fail(id, `could not check the end of ${path}`)(asMessage(error))
            })
            if (tail.torn > 0) {
              yield* Effect.logWarning(
                `kern: ${NodePath.basename(path)} ended in half a line (${tail.torn} bytes, cut off by another program); it was removed before the next message`
              )
            }
            const mtimeMs = yield* writeLine(line, tail.size)
            const now = yield* Ref.updateAndGet(stats, (s) => ({ messages: s.messages + 1, bytes: tail.size + line.length }))
            // Made of values already of its fields' types, and its class has no refinement (unvalidatedRecords.test.ts).
            yield* record(new SessionRecord({ sessionId: id, createdAt: start.createdAt, ...now, mtimeMs }, true))
          })
        return { id, path, append, stats: Ref.get(stats) } satisfies SessionWriter
      })

    const headerFor = (id: string) =>
      Effect.map(DateTime.now, (now) => new SessionHeader({ version: 1, id, createdAt: DateTime.formatIso(now), agent: config.name }))

    /** Writes a new session's file with its header (never over an existing one) and records it. */
    const start = (id: string, header: SessionHeader) => Effect.gen(function*() {
      const path = fileOf(id)
      yield* fs.makeDirectory(dir, { recursive: true, mode: privateModes.dir }).pipe(Effect.mapError(fail(id, `could not create ${dir}`)))
      yield* fs.writeFileString(path, lineOf(header), { flag: "wx", mode: privateModes.file }).pipe(
        Effect.mapError(fail(id, `could not create ${path}`))
      )
      yield* record(new SessionRecord({ sessionId: id, createdAt: header.createdAt, messages: 0, ...(yield* fileStamp(id, path)) }))
      return id
    })

    /** Starts a new session of `conversation` (it becomes the conversation's active one). */
    const createIn = (conversation: string) => Effect.gen(function*() {
      const existing = yield* ids
      const id = sessionIdIn(yield* newId(existing[existing.length - 1]), conversation)
      return yield* start(id, yield* headerFor(id))
    }).pipe(Effect.withSpan("kern.session.create", { attributes: { conversation } }))

    /**
     * Starts a session of `conversation` as of `atMs`, an instant in the past (an imported conversation: its id and
     * header carry the time it began at its source). Its id sorts by that time among the conversation's sessions; the
     * caller keeps `atMs` at or before now, so no later session id is pushed past it.
     */
    const createAt = (conversation: string, atMs: number) => Effect.gen(function*() {
      const suffix = (yield* Random.nextIntBetween(0, 0x10000)).toString(16).padStart(4, "0")
      const id = sessionIdIn(`${stamp(atMs)}-${suffix}`, conversation)
      const header = new SessionHeader({ version: 1, id, createdAt: DateTime.formatIso(DateTime.unsafeMake(atMs)), agent: config.name })
      return yield* start(id, header)
    }).pipe(Effect.withSpan("kern.session.createAt", { attributes: { conversation } }))

    /** Starts a new session of the operator's conversation. */
    const create = createIn(mainConversation)

    /**
     * Opens a session for appending after repairing it: a torn last line is cut off (so the next line does not
     * glue onto it), a last line without its newline gets one, and unfinished tool calls get their "interrupted"
     * results written. A file with no line at all gets its header; a file with lines but no header is not kern's to
     * rewrite: it is renamed `<id>.jsonl.unreadable` and a new session starts, so one bad file never fails every
     * later chat. With `from` (the session's context cut) only the lines from the cut on are read, when the file
     * is still the one the cut was made in; the messages before it are not needed in memory.
     */
    const open = (id: string, from?: ReadFrom): Effect.Effect<OpenedSession, SessionError, Scope.Scope> =>
      Effect.gen(function*() {
        const { parsed, path } = yield* read(id, from)
        if (Either.isLeft(parsed)) {
          if (parsed.left.empty) {
            yield* fs.writeFileString(path, lineOf(yield* headerFor(id))).pipe(Effect.mapError(fail(id, "could not repair the session")))
            const repaired = yield* open(id)
            return { ...repaired, problems: [`${id}.jsonl had no session header and no messages; a header was written`] }
          }
          const aside = `${path}.unreadable`
          yield* fs.rename(path, aside).pipe(Effect.mapError(fail(id, `could not set ${path} aside`)))
          yield* index.remove(id).pipe(Effect.catchTag("SessionIndexError", (error) => Effect.logWarning(`kern: ${error.message}`)))
          const fresh = yield* open(yield* createIn(conversationOfSession(id)))
          return {
            ...fresh,
            problems: [`${parsed.left.message}; set aside as ${NodePath.basename(aside)}, and a new session ${fresh.loaded.id} started`]
          }
        }
        const loaded = { ...parsed.right, id, path } satisfies LoadedSession
        if (loaded.tornBytes > 0) {
          yield* fs.truncate(path, loaded.validBytes).pipe(Effect.mapError(fail(id, "could not repair the session")))
        }
        if (loaded.missingNewline) {
          yield* fs.writeFileString(path, "\n", { flag: "a" }).pipe(Effect.mapError(fail(id, "could not repair the session")))
        }
        const { bytes } = yield* fileStamp(id, path)
        const writer = yield* writerFor(id, path, { createdAt: loaded.header.createdAt, messages: loaded.messageLines, bytes })
        for (const synthetic of loaded.synthesized) yield* writer.append(synthetic)
        if (loaded.synthesized.length === 0) {
          yield* record(new SessionRecord({ sessionId: id, createdAt: loaded.header.createdAt, messages: loaded.messageLines, ...(yield* fileStamp(id, path)) }))
        }
        return { writer, loaded, problems: loaded.problems }
      })

    /**
     * Opens the newest session of a conversation (the operator's unless named; a new one when `fresh`, or when there is
     * none); `cutOf` says where the session may be read from (its context cut).
     */
    const openActive = <E = never, R = never>(
      options: {
        readonly fresh?: boolean
        readonly conversation?: string | undefined
        readonly cutOf?: ((id: string) => Effect.Effect<Option.Option<ReadFrom>, E, R>) | undefined
      } = {}
    ) =>
      Effect.gen(function*() {
        const conversation = options.conversation ?? mainConversation
        const active = options.fresh === true ? Option.none<string>() : yield* activeIdIn(conversation)
        if (Option.isNone(active)) return yield* open(yield* createIn(conversation))
        const from = options.cutOf === undefined ? Option.none<ReadFrom>() : yield* options.cutOf(active.value)
        return yield* open(active.value, Option.getOrUndefined(from))
      })

    /** A session's count from the index, or from the file when the index has none or the file changed since. */
    const summaryOf = (id: string, known: SessionRecord | undefined) =>
      Effect.gen(function*() {
        const path = fileOf(id)
        const stamp = yield* fileStamp(id, path)
        if (known !== undefined && known.bytes === stamp.bytes && known.mtimeMs === stamp.mtimeMs) return known
        // A file kern cannot read (a stray name, a permission) is listed with no count rather than failing the list.
        const parsed = yield* Effect.either(Effect.flatMap(read(id), ({ parsed }) => parsed))
        const counted = new SessionRecord({
          sessionId: id,
          createdAt: Either.isRight(parsed) ? parsed.right.header.createdAt : "",
          messages: Either.isRight(parsed) ? parsed.right.messageLines : 0,
          ...stamp
        })
        yield* record(counted)
        return counted
      })

    const list = Effect.gen(function*() {
      const all = yield* ids
      // Each conversation's newest session is its active one.
      const active = new Set(new Map(all.map((id) => [conversationOfSession(id), id])).values())
      const records = yield* index.all.pipe(
        Effect.catchTag("SessionIndexError", (error) => Effect.as(Effect.logWarning(`kern: ${error.message}`), []))
      )
      const byId = new Map(records.map((entry) => [entry.sessionId, entry]))
      return yield* Effect.forEach(all, (id) =>
        Effect.map(summaryOf(id, byId.get(id)), (entry) => ({
          id,
          createdAt: entry.createdAt,
          messages: entry.messages,
          bytes: entry.bytes,
          updatedAt: new Date(entry.mtimeMs).toISOString(),
          active: active.has(id),
          conversation: conversationOfSession(id)
        } satisfies SessionSummary)))
    }).pipe(Effect.withSpan("kern.session.list"))

    return { create, createIn, createAt, load, open, openActive, list, activeId, activeIdIn, dir } as const
  })
}) {}
