import { FileSystem } from "@effect/platform"
import { Clock, DateTime, Effect, Either, Option, Random, Schema, type Scope } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { AgentConfig } from "../config/AgentConfig.js"
import { SessionHeader, type SessionLine, SessionLine as SessionLineSchema, type SessionMessage } from "./messages.js"
import { type ParsedSession, parseSession } from "./parse.js"

export class SessionError extends Schema.TaggedError<SessionError>()("SessionError", {
  sessionId: Schema.String,
  message: Schema.String
}) {}

export interface SessionSummary {
  readonly id: string
  readonly createdAt: string
  readonly messages: number
  readonly bytes: number
  readonly updatedAt: string
  readonly active: boolean
}

/** An open session: appends go straight to the file, one line per message, so a crash loses nothing appended. */
export interface SessionWriter {
  readonly id: string
  readonly path: string
  readonly append: (message: SessionMessage) => Effect.Effect<void, SessionError>
}

export interface LoadedSession extends ParsedSession {
  readonly id: string
  readonly path: string
}

const encodeLine = Schema.encodeSync(Schema.parseJson(SessionLineSchema))
const lineOf = (line: SessionLine) => `${encodeLine(line)}\n`

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
const writeAllSync = (fd: number, text: string): void => {
  const bytes = Buffer.from(text, "utf8")
  let offset = 0
  while (offset < bytes.length) offset += NodeFs.writeSync(fd, bytes, offset, bytes.length - offset)
}

const idPattern = /^[A-Za-z0-9._-]+$/

/** The agent's conversations as append-only JSONL files in `.kern/sessions/`. */
export class SessionStore extends Effect.Service<SessionStore>()("kern/session/SessionStore", {
  effect: Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const { config, paths } = yield* AgentConfig
    const dir = paths.sessionsDir
    const fileOf = (id: string) => NodePath.join(dir, `${id}.jsonl`)
    const fail = (sessionId: string, what: string) => (error: { readonly message: string }) =>
      new SessionError({ sessionId, message: `${what}: ${error.message}` })

    const ids = Effect.gen(function*() {
      if (!(yield* fs.exists(dir))) return [] as Array<string>
      const names = yield* fs.readDirectory(dir)
      return names.filter((name) => name.endsWith(".jsonl")).map((name) => name.slice(0, -6)).sort()
    }).pipe(Effect.mapError(fail("*", `could not list ${dir}`)))

    /** The newest session, if any. */
    const activeId = Effect.map(ids, (all) => Option.fromNullable(all[all.length - 1]))

    const load = (id: string) =>
      Effect.gen(function*() {
        if (!idPattern.test(id)) return yield* new SessionError({ sessionId: id, message: `"${id}" is not a session id` })
        const path = fileOf(id)
        if (!(yield* fs.exists(path).pipe(Effect.mapError(fail(id, "could not inspect the session"))))) {
          return yield* new SessionError({ sessionId: id, message: `no session "${id}" in ${dir}` })
        }
        const text = yield* fs.readFileString(path).pipe(Effect.mapError(fail(id, `could not read ${path}`)))
        const parsed = parseSession(text, `${id}.jsonl`)
        if (Either.isLeft(parsed)) return yield* new SessionError({ sessionId: id, message: parsed.left })
        return { ...parsed.right, id, path } satisfies LoadedSession
      }).pipe(Effect.withSpan("kern.session.load", { attributes: { sessionId: id } }))

    /**
     * Appends are one synchronous write(2) of a whole line each: when `append` returns the line is in the OS, so a
     * killed process loses nothing it appended, and a line is never interleaved or half-buffered in this process.
     * The descriptor closes with the scope, after an fsync.
     */
    const writerFor = (id: string, path: string): Effect.Effect<SessionWriter, SessionError, Scope.Scope> =>
      Effect.map(
        Effect.acquireRelease(
          Effect.try({ try: () => NodeFs.openSync(path, "a"), catch: (error) => fail(id, `could not open ${path}`)(asMessage(error)) }),
          (fd) => Effect.sync(() => {
            NodeFs.fsyncSync(fd)
            NodeFs.closeSync(fd)
          }).pipe(Effect.ignoreLogged)
        ),
        (fd) => ({
          id,
          path,
          append: (message: SessionMessage) =>
            Effect.try({
              try: () => writeAllSync(fd, lineOf(message)),
              catch: (error) => fail(id, `could not append to ${path}`)(asMessage(error))
            })
        })
      )

    /** Starts a new session (it becomes the active one). */
    const create = Effect.gen(function*() {
      const existing = yield* ids
      const id = yield* newId(existing[existing.length - 1])
      const path = fileOf(id)
      yield* fs.makeDirectory(dir, { recursive: true }).pipe(Effect.mapError(fail(id, `could not create ${dir}`)))
      const createdAt = DateTime.formatIso(yield* DateTime.now)
      const header = new SessionHeader({ version: 1, id, createdAt, agent: config.name })
      yield* fs.writeFileString(path, lineOf(header), { flag: "wx" }).pipe(Effect.mapError(fail(id, `could not create ${path}`)))
      return id
    }).pipe(Effect.withSpan("kern.session.create"))

    /**
     * Opens a session for appending after repairing it: a torn last line is cut off (so the next line does not
     * glue onto it) and unfinished tool calls get their "interrupted" results written.
     */
    const open = (id: string) =>
      Effect.gen(function*() {
        const loaded = yield* load(id)
        if (loaded.tornBytes > 0) {
          yield* fs.truncate(loaded.path, loaded.validBytes).pipe(Effect.mapError(fail(id, "could not repair the session")))
        }
        if (loaded.missingNewline) {
          yield* fs.writeFileString(loaded.path, "\n", { flag: "a" }).pipe(Effect.mapError(fail(id, "could not repair the session")))
        }
        const writer = yield* writerFor(id, loaded.path)
        for (const synthetic of loaded.synthesized) yield* writer.append(synthetic)
        return { writer, loaded }
      })

    const list = Effect.gen(function*() {
      const all = yield* ids
      const active = all[all.length - 1]
      return yield* Effect.forEach(all, (id) =>
        Effect.gen(function*() {
          const path = fileOf(id)
          const info = yield* fs.stat(path).pipe(Effect.mapError(fail(id, `could not inspect ${path}`)))
          const loaded = yield* Effect.either(load(id))
          const updated = Option.getOrElse(info.mtime, () => new Date(0))
          return {
            id,
            createdAt: Either.isRight(loaded) ? loaded.right.header.createdAt : "",
            messages: Either.isRight(loaded) ? loaded.right.messages.length : 0,
            bytes: Number(info.size),
            updatedAt: updated.toISOString(),
            active: id === active
          } satisfies SessionSummary
        }))
    })

    return { create, load, open, list, activeId, dir } as const
  })
}) {}
