import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Clock, Data, Duration, Effect, Either, Option, Random, Ref, Schedule, Schema, type Scope } from "effect"
import { parseJsonWith } from "../config/json.js"
import * as NodeOs from "node:os"
import { privateFileMode } from "./privateFiles.js"
import { holderRunning, parseProcessStat, readProcessStat } from "./processState.js"

/**
 * A lock held by one process, visible to every process on the machine: a file whose content names its holder.
 *
 * The file appears with its whole content at once (written to a temporary file, then hard-linked into place, which
 * fails if the name exists), so a reader never mistakes a lock being written for a torn one. A holder is live when
 * its pid exists and, where /proc tells process start times, started when the lock says: a pid reused by another
 * process is no holder, and neither is a zombie. A lock whose holder is gone (SIGKILL, a crash) is taken over under a second lock file, so
 * two processes that both find it stale cannot both win.
 */

/** Who holds a lock: the JSON content of the lock file. */
export const LockHolder = Schema.Struct({
  pid: Schema.Int.pipe(Schema.positive()),
  /** The process's start time in clock ticks since boot (/proc/<pid>/stat field 22), where the OS tells it. */
  processStart: Schema.optional(Schema.String),
  /** When the lock was taken (ISO 8601). */
  startedAt: Schema.String,
  host: Schema.String,
  /** What holds it, for messages (`kern chat`). */
  command: Schema.String,
  /** Where the holder's HTTP API listens (`http://127.0.0.1:4800`), when it serves one: where clients find it. */
  address: Schema.optional(Schema.String),
  /**
   * A `kern serve` among several runners sharing agents (host.json's `cluster`): its cluster (the database and schema
   * of the cluster's tables, no password) and its address in it (`host:port`).
   */
  cluster: Schema.optional(Schema.Struct({ database: Schema.String, runner: Schema.String }))
})
export type LockHolder = typeof LockHolder.Type

const LockHolderJson = parseJsonWith(LockHolder)
const decodeHolder = Schema.decodeUnknownEither(LockHolderJson)
const encodeHolder = Schema.encodeSync(LockHolderJson)

/** The lock file could not be read, written or removed (not: it is held). */
export class LockFileError extends Schema.TaggedError<LockFileError>()("LockFileError", {
  file: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.file}: ${this.detail}`
  }
}

/** Someone else holds the lock (and did not let go within the wait). */
export class LockBusy extends Data.TaggedError("LockBusy")<{
  readonly file: string
  readonly holder: Option.Option<LockHolder>
}> {}

const ioError = (file: string) => (error: PlatformError) => new LockFileError({ file, detail: error.message })

const isNotFound = (error: PlatformError) => error._tag === "SystemError" && error.reason === "NotFound"

/** Field 22 of /proc/<pid>/stat: after the `(comm)` field, which may itself hold spaces and parentheses. */
export const parseProcessStart = (stat: string): Option.Option<string> =>
  Option.fromNullable(parseProcessStat(stat)?.start)

/** A process's start time where /proc has it; none elsewhere (or when the process is gone). */
export const processStart = (pid: number): Effect.Effect<Option.Option<string>> =>
  Effect.sync(() => Option.fromNullable(readProcessStat(pid)?.start))

/** This process as a lock holder; `address` is where its HTTP API listens, if it serves one. */
export const currentHolder = (command: string, address?: string, cluster?: LockHolder["cluster"]) =>
  holderFor(process.pid, command, address, cluster)

/** The process `pid` (this one, or a child it just started) as a holder. */
export const holderFor = (pid: number, command: string, address?: string, cluster?: LockHolder["cluster"]) =>
  Effect.gen(function*() {
    const start = yield* processStart(pid)
    const now = yield* Clock.currentTimeMillis
    return {
      pid,
      ...(Option.isSome(start) ? { processStart: start.value } : {}),
      startedAt: new Date(now).toISOString(),
      host: NodeOs.hostname(),
      command,
      ...(address === undefined ? {} : { address }),
      ...(cluster === undefined ? {} : { cluster })
    } satisfies LockHolder
  })

/**
 * Whether the holder still runs: its pid names a running process (a zombie is gone) that started when the lock says.
 * A lock from another host cannot be checked from here and counts as live.
 */
export const isLive = (holder: LockHolder) => Effect.sync(() => holderRunning(holder))

/** A temporary file beside `file` holding `content`, for `use` to put in place; removed afterwards if still there. */
const withTemp = <A>(file: string, content: string, use: (temp: string) => Effect.Effect<A, PlatformError>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const suffix = (yield* Random.nextInt).toString(36).replace("-", "")
    const temp = `${file}.${process.pid}.${suffix}.tmp`
    yield* fs.writeFileString(temp, content, { flag: "wx", mode: privateFileMode })
    return yield* use(temp).pipe(
      Effect.ensuring(fs.remove(temp).pipe(Effect.catchIf(isNotFound, () => Effect.void), Effect.catchAll((error) =>
        Effect.logDebug(`could not remove ${temp}`, error)
      )))
    )
  })

/** Creates `file` holding `content` in one step; false when it already exists. */
const createWhole = (file: string, content: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    withTemp(file, content, (temp) =>
      fs.link(temp, file).pipe(
        Effect.as(true),
        Effect.catchIf((error) => error._tag === "SystemError" && error.reason === "AlreadyExists", () => Effect.succeed(false))
      )))

/**
 * Replaces `file` with one holding `content` in one step: the name never stops existing, so no creator slips in, and
 * a reader sees the old content or the new, never an empty or half-written file.
 */
export const replaceWhole = (file: string, content: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => withTemp(file, content, (temp) => fs.rename(temp, file)))

/** The file's content, or none when it does not exist. */
const readText = (file: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.readFileString(file).pipe(
      Effect.map(Option.some),
      Effect.catchIf(isNotFound, () => Effect.succeed(Option.none<string>()))
    ))

/** Removes `file` if it still holds `content` (so a lock taken over meanwhile is left to its new holder). */
const removeIfHolding = (file: string, content: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const now = yield* readText(file)
    if (Option.isSome(now) && now.value === content) {
      yield* fs.remove(file).pipe(Effect.catchIf(isNotFound, () => Effect.void))
    }
  })

/** What a look at an existing lock file found. */
export type Found =
  | { readonly _tag: "Gone" }
  | { readonly _tag: "Live"; readonly holder: LockHolder; readonly content: string }
  | { readonly _tag: "Stale"; readonly content: string; readonly why: string }

/** What the lock file says now, looked at only (`kern doctor`): absent, held by a live process, or stale. */
export const inspect = (file: string) =>
  Effect.gen(function*() {
    const content = yield* readText(file)
    if (Option.isNone(content)) return { _tag: "Gone" } satisfies Found
    const decoded = decodeHolder(content.value)
    if (Either.isLeft(decoded)) {
      return { _tag: "Stale", content: content.value, why: "its content is not a lock (torn or foreign)" } satisfies Found
    }
    const holder = decoded.right
    return (yield* isLive(holder))
      ? { _tag: "Live", holder, content: content.value } satisfies Found
      : { _tag: "Stale", content: content.value, why: `pid ${holder.pid} (${holder.command}) is no longer running` } satisfies Found
  })

/** The outcome of one attempt: held by us (with what was taken over, if anything) or by someone else. */
export type Attempt =
  | { readonly _tag: "Acquired"; readonly content: string; readonly tookOver: Option.Option<string> }
  | { readonly _tag: "Busy"; readonly holder: Option.Option<LockHolder> }

/**
 * Replaces a stale lock while holding `<file>.takeover`: only one taker re-reads the stale content and renames its
 * own over it (only takers change a stale lock, and they take turns). A takeover lock whose holder died is itself
 * removed (the next attempt retries); two takers that find such a dead takeover lock in the same microseconds could
 * both proceed, a window that needs a crash inside this function first, which we accept.
 */
const takeOver = (file: string, staleContent: string, mine: string) =>
  Effect.gen(function*() {
    const guard = `${file}.takeover`
    if (!(yield* createWhole(guard, mine))) {
      const found = yield* inspect(guard)
      if (found._tag === "Stale") yield* removeIfHolding(guard, found.content)
      return false
    }
    return yield* Effect.gen(function*() {
      const now = yield* readText(file)
      if (Option.isNone(now)) return yield* createWhole(file, mine)
      if (now.value !== staleContent) return false
      yield* replaceWhole(file, mine)
      return true
    }).pipe(Effect.ensuring(removeIfHolding(guard, mine).pipe(Effect.catchAll((error) =>
      Effect.logWarning(`could not remove ${guard}`, error)
    ))))
  })

const maxRounds = 8

/**
 * Says why a holder that looks live has let go all the same (a runner on another machine whose agent the cluster gave
 * to this one), or undefined: it holds the lock.
 */
export type Released = (holder: LockHolder) => string | undefined

/**
 * One attempt to take the lock now: creates it, or takes over a stale one (or one `released` says was let go), or
 * reports the live holder.
 */
export const tryAcquire = (
  file: string,
  holder: LockHolder,
  released?: Released
): Effect.Effect<Attempt, LockFileError, FileSystem.FileSystem> => {
  const mine = encodeHolder(holder)
  const round = (n: number, tookOver: Option.Option<string>): Effect.Effect<Attempt, PlatformError, FileSystem.FileSystem> =>
    Effect.gen(function*() {
      if (yield* createWhole(file, mine)) return { _tag: "Acquired", content: mine, tookOver } satisfies Attempt
      const inspected = yield* inspect(file)
      const letGo = inspected._tag === "Live" ? released?.(inspected.holder) : undefined
      const found: Found = inspected._tag === "Live" && letGo !== undefined
        ? { _tag: "Stale", content: inspected.content, why: letGo }
        : inspected
      if (found._tag === "Live") return { _tag: "Busy", holder: Option.some(found.holder) } satisfies Attempt
      if (n >= maxRounds) return { _tag: "Busy", holder: Option.none() } satisfies Attempt
      if (found._tag === "Gone") return yield* round(n + 1, tookOver)
      const won = yield* takeOver(file, found.content, mine)
      return won
        ? { _tag: "Acquired", content: mine, tookOver: Option.some(found.why) } satisfies Attempt
        : yield* round(n + 1, Option.some(found.why))
    })
  return round(0, Option.none()).pipe(Effect.mapError(ioError(file)), Effect.withSpan("kern.storage.LockFile.tryAcquire"))
}

/** The live holder of `file`, if any: a stale or unreadable lock reads as none. */
export const readHolder = (file: string): Effect.Effect<Option.Option<LockHolder>, LockFileError, FileSystem.FileSystem> =>
  inspect(file).pipe(
    Effect.map((found) => found._tag === "Live" ? Option.some(found.holder) : Option.none()),
    Effect.mapError(ioError(file)),
    Effect.withSpan("kern.storage.LockFile.readHolder")
  )

export interface AcquireOptions {
  /** How long to wait for a live holder to let go; zero tries once. */
  readonly wait: Duration.DurationInput
  /** Time between attempts while waiting. */
  readonly poll: Duration.DurationInput
  /** Called once, when the first attempt finds the lock held. */
  readonly onWait?: (holder: Option.Option<LockHolder>) => Effect.Effect<void>
  /** Called when a stale lock was taken over, with why it was stale. */
  readonly onTakeOver?: (why: string) => Effect.Effect<void>
  /** Holders that let go without removing the lock, though they look live (tryAcquire). */
  readonly released?: Released | undefined
}

/** The attempts while waiting: one every `poll`, for `wait` at most. */
export const waiting = (options: AcquireOptions) => Schedule.spaced(options.poll).pipe(Schedule.upTo(options.wait))

/**
 * Holds the lock until the scope closes (SIGINT and SIGTERM close scopes; after a SIGKILL the next taker finds the
 * holder gone). Waits up to `wait`, attempting on the `waiting` schedule, then fails with LockBusy naming the holder.
 */
export const acquire = (
  file: string,
  holder: LockHolder,
  options: AcquireOptions
): Effect.Effect<void, LockBusy | LockFileError, FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function*() {
    // Each attempt registers the release of what it won before anything can interrupt it; between attempts the
    // wait can be interrupted (Ctrl-C while waiting leaves nothing behind).
    const attempt = Effect.uninterruptible(Effect.flatMap(tryAcquire(file, holder, options.released), (result) =>
      result._tag === "Acquired"
        ? Effect.as(
          Effect.addFinalizer(() =>
            removeIfHolding(file, result.content).pipe(
              Effect.catchAll((error) => Effect.logWarning(`could not remove the lock ${file}`, error))
            )
          ),
          result.tookOver
        )
        : Effect.fail(new LockBusy({ file, holder: result.holder }))))
    const announced = yield* Ref.make(Duration.isZero(Duration.decode(options.wait)))
    const announce = (busy: LockBusy) =>
      Effect.flatMap(Ref.getAndSet(announced, true), (done) =>
        done || options.onWait === undefined ? Effect.void : options.onWait(busy.holder))
    const tookOver = yield* attempt.pipe(
      Effect.tapErrorTag("LockBusy", announce),
      Effect.retry({ schedule: waiting(options), while: (error) => error._tag === "LockBusy" })
    )
    if (Option.isSome(tookOver) && options.onTakeOver !== undefined) yield* options.onTakeOver(tookOver.value)
  }).pipe(Effect.withSpan("kern.storage.LockFile.acquire", { attributes: { file } }))
