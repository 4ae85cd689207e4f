/**
 * The one door to the agent's files: every reader of the agent folder (the system prompt's memory files, the notes
 * summary, knowledge, recall indexing, autoCommit and the file tools) opens files through it.
 *
 * What it lets through is a regular file whose real path is inside the folder (or one of the given roots) and not
 * under `.kern/`, with one name (nlink 1), no larger than a cap. Why each rule:
 * - Real path: a symlink (or a symlinked folder) may point into `.kern/` (the provider key, bot tokens,
 *   `KERN_AUTH_TOKEN`) or out of the folder (an SSH key). The check runs on the path actually opened (on Linux, the
 *   opened descriptor's own path in /proc), so a link swapped in between the check and the open is caught too; the
 *   last component is opened with O_NOFOLLOW.
 * - One name: a hard link is the same file under a second name, and nothing on the file says where the other name
 *   is: it may be `.kern/.env` or `~/.ssh/id_ed25519` (a hard link to a file outside cannot be found without
 *   scanning every file system). So every regular file with more than one name is refused. Memory files have one:
 *   kern writes them by rename, editors and git do the same; a copy (`cp`) replaces a hard link.
 * - Regular files only, opened with O_NONBLOCK and checked on the opened descriptor (fstat): a FIFO cannot block
 *   the open or the read, a device (/dev/zero) is never read, and the file checked is the file read.
 * - A cap: a file is read to at most `maxBytes` (+1, to see that it is larger), however it grows meanwhile.
 *
 * Synchronous on purpose: one open, fstat and read per file, bounded by the cap, is cheaper than the thread pool's
 * round trips, and the sync form is what the file tools' scanning loops (grep, context_for_task) need.
 */
import { Effect, Either, Ref, Schema, type Scope } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { makeOpenAhead, notOpened, type OpenAhead } from "./openAhead.js"

/** kern's own folder: never read as agent memory, whatever link leads there. Compared without case. */
export const kernDirName = ".kern"

/** The most an agent memory file may hold (a note, a knowledge file, AGENTS.md) for kern to read it. */
export const agentFileMaxBytes = 4 * 1024 * 1024

export const AgentFileProblem = Schema.Literal(
  "missing",
  "outside",
  "kern",
  "link-loop",
  "hard-link",
  "not-regular",
  "too-large",
  "unreadable"
)
export type AgentFileProblem = typeof AgentFileProblem.Type

/** A file of the agent folder kern did not read: missing, refused by the door, or unreadable. */
export class AgentFileError extends Schema.TaggedError<AgentFileError>()("AgentFileError", {
  /** The path as the reader named it (relative to the agent folder where it is inside). */
  path: Schema.String,
  reason: AgentFileProblem,
  detail: Schema.String
}) {
  override get message(): string {
    switch (this.reason) {
      case "missing":
        return `${this.path} does not exist`
      case "outside":
        return `${this.path} resolves (through a symlink) to ${this.detail}, outside the agent folder; kern reads only files inside it`
      case "kern":
        return `${this.path} resolves to ${this.detail}, under .kern/ (kern's config, secrets and database); kern never reads it as an agent file`
      case "link-loop":
        return `${this.path}: ${this.detail}`
      case "hard-link":
        return `${this.path} is a hard link (${this.detail} names for one file); its other name may be .kern/.env or a ` +
          "key outside the folder, so kern does not read it. Replace it with a copy: `cp --remove-destination SOURCE PATH`"
      case "not-regular":
        return `${this.path} is a ${this.detail}, not a regular file; kern reads only regular files`
      case "too-large":
        return `${this.path} is ${this.detail}; kern reads agent files only up to that size`
      case "unreadable":
        return `${this.path} could not be read: ${this.detail}`
    }
  }
}

/** Whether the door refused the file (a link, a FIFO, too large), as opposed to a missing or unreadable one. */
export const isRefusal = (error: AgentFileError): boolean => error.reason !== "missing" && error.reason !== "unreadable"

export interface AgentFileOptions {
  /** The folders files may be in, the agent folder first; real or as named. */
  readonly roots: ReadonlyArray<string>
  /** Whether a real path outside every root is refused (the default) or allowed (the workspace guard is off). */
  readonly outside?: "refuse" | "allow"
  /** Refuse files larger than this; `agentFileMaxBytes` unless given. */
  readonly maxBytes?: number
  /** How to name the file in errors; the path relative to the first root (or as given) unless given. */
  readonly display?: string | undefined
}

/** A file the door let through, as fstat saw it on the opened descriptor. */
export interface AgentFile {
  /** The real absolute path. */
  readonly path: string
  readonly size: number
  readonly mtimeMs: number
  /** Which file it is (device and inode): a name that later leads elsewhere leads to another. */
  readonly dev: number
  readonly ino: number
}

export interface AgentFileBytes extends AgentFile {
  readonly bytes: Uint8Array
}

const constants = NodeFs.constants
const openFlags = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0)

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * `candidate` relative to `dir` when it is `dir` or below it ("" for `dir` itself), else undefined; both are
 * absolute and normalized (resolved, real, or the kernel's own account of a descriptor). The same as
 * NodePath.relative's answer, without its cost: a scan checks every file's path against every root several times.
 */
const relativeWithin = (dir: string, candidate: string): string | undefined => {
  if (NodePath.sep !== "/" || !candidate.startsWith("/") || !dir.startsWith("/")) {
    const rel = NodePath.relative(dir, candidate)
    return rel === "" || (!rel.startsWith("..") && !NodePath.isAbsolute(rel)) ? rel : undefined
  }
  if (candidate === dir) return ""
  const prefix = dir.endsWith("/") ? dir.length : dir.length + 1
  if (!candidate.startsWith(dir) || (prefix > dir.length && candidate[dir.length] !== "/")) return undefined
  const rel = candidate.slice(prefix)
  // As NodePath.relative's answer is read: one starting with ".." is taken for a way out.
  return rel.startsWith("..") ? undefined : rel
}

const realOrSelf = (dir: string): string => {
  try {
    return NodeFs.realpathSync.native(dir)
  } catch {
    return NodePath.resolve(dir)
  }
}

const kindOf = (stat: NodeFs.Stats): string =>
  stat.isFIFO()
    ? "FIFO (named pipe)"
    : stat.isCharacterDevice()
    ? "character device"
    : stat.isBlockDevice()
    ? "block device"
    : stat.isSocket()
    ? "socket"
    : stat.isDirectory()
    ? "directory"
    : "special file"

const formatSize = (bytes: number): string =>
  bytes < 1024 * 1024 ? `${Math.ceil(bytes / 1024)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`

/** Where the descriptor really points, by the kernel's own account; undefined where /proc is not there. */
const openedPath = (fd: number): string | undefined => {
  try {
    return NodeFs.readlinkSync(`/proc/self/fd/${fd}`)
  } catch {
    return undefined
  }
}

/**
 * A folder a scan reads many files from, held open: the kernel named its real path when it was opened, and a file
 * opened through it (`/proc/<pid>/fd/N/name`, openat's way) is a file of that very folder, wherever a link on the way
 * to it leads now. So neither the file's real path (a readlink per component) nor its descriptor's path is looked up.
 */
interface HeldFolder {
  /** The folder as the scan named it (the part of a file's path before its name). */
  readonly named: string
  /** `/proc/<pid>/fd/N/`: what a name in the folder is opened through. */
  readonly through: string
  /** The folder's real path, as the kernel named it when it was opened, `/`-terminated. */
  readonly real: string
  /** Whether the folder's place lets its files through: inside the roots (or the guard is off) and not in .kern/. */
  readonly placed: boolean
}

/** What /proc/self leads to (this process's id as the mounted /proc counts it); undefined where there is none. */
const ownProcess = (): string | undefined => {
  try {
    const id = NodeFs.readlinkSync("/proc/self")
    return /^\d+$/.test(id) ? id : undefined
  } catch {
    return undefined
  }
}

/** `path` resolved against `first` as NodePath.resolve answers it, without its cost when it is absolute and normal. */
const resolved = (first: string, path: string): string =>
  NodePath.sep === "/" && path.charCodeAt(0) === 47 && !unnormalized.test(path) ? path : NodePath.resolve(first, path)
const unnormalized = /\/\/|\/\.\.?(?:\/|$)|.\/$/

/** A name that may spell .kern in any case (or hold it between backslashes): such a file takes the full way. */
const mayBeKern = /\.kern/i

/**
 * Opens files (absolute and normalized) through the door and, with `read`, reads them. Returns the error instead of
 * throwing; the descriptor is always closed. `held` is the folder the file is in, opened by a scan; `into` a buffer
 * the scan reads into (what it answers is valid until its next read).
 */
const openerFor = (options: AgentFileOptions) => {
  const lexicalRoots = options.roots.map((root) => NodePath.resolve(root))
  const first = lexicalRoots[0] ?? NodePath.resolve(".")
  // Once per reader, not per file: a scan of 20,000 files would otherwise resolve the roots 20,000 times.
  const realRoots = lexicalRoots.map(realOrSelf)
  const allRoots = [...realRoots, ...lexicalRoots]
  const maxBytes = options.maxBytes ?? agentFileMaxBytes

  /** Why a path (as named, or real) may not be read; undefined when it may. */
  const placeProblem = (candidate: string, real: boolean): "kern" | "outside" | undefined => {
    let rel: string | undefined
    for (const root of real ? realRoots : allRoots) {
      rel = relativeWithin(root, candidate)
      if (rel !== undefined) break
    }
    const names = (rel ?? candidate).toLowerCase()
    if (names.includes(kernDirName) && names.split(/[\\/]+/).some((name) => name === kernDirName)) return "kern"
    if (real && rel === undefined && options.outside !== "allow") return "outside"
    return undefined
  }

  /** Where a scan's folder is (the descriptor `fd` holds it open); undefined where the kernel cannot tell. */
  const heldFolder = (named: string, fd: number, fds: string): HeldFolder | undefined => {
    const real = openedPath(fd)
    // A folder removed meanwhile is named "… (deleted)", one out of this process's root "(unreachable)…".
    if (real === undefined || !real.startsWith("/") || real.endsWith(" (deleted)")) return undefined
    return { named, through: `${fds}${fd}/`, real: real.endsWith("/") ? real : `${real}/`, placed: placeProblem(real, true) === undefined }
  }

  /**
   * What the file `name` of the held folder is opened by (`/proc/<pid>/fd/N/name`), when the full way would let the
   * same file through: a regular name (not a link: O_NOFOLLOW), placed where the folder is, the folder's real path
   * the one the scan named it by (else the path as named is checked too). Undefined otherwise: the full way then
   * follows or names it.
   */
  const heldPath = (absolute: string, held: HeldFolder): string | undefined => {
    if (!held.placed || absolute.length <= held.named.length + 1 || absolute.charCodeAt(held.named.length) !== 47) return undefined
    const name = absolute.slice(held.named.length + 1)
    if (name === "." || name === ".." || name.includes("/") || mayBeKern.test(name)) return undefined
    if (held.named.length + 1 !== held.real.length || !absolute.startsWith(held.real)) {
      if (placeProblem(absolute, false) !== undefined) return undefined
    }
    return held.through + name
  }

  const openHeld = (absolute: string, held: HeldFolder): number | undefined => {
    const through = heldPath(absolute, held)
    if (through === undefined) return undefined
    try {
      return NodeFs.openSync(through, openFlags)
    } catch {
      return undefined
    }
  }

  /**
   * `opened`, when given, is the file opened through `held` already (by heldPath's answer, or `notOpened`: the open
   * was not made or failed, and the full way is taken).
   */
  const open = (
    absolute: string,
    read: boolean,
    held?: HeldFolder,
    into?: { buffer: Buffer },
    opened?: number
  ): Either.Either<AgentFileBytes, AgentFileError> => {
    const fail = (reason: AgentFileProblem, detail: string) => {
      const fromFirst = options.display === undefined ? relativeWithin(first, absolute) : undefined
      const shown = options.display ?? (fromFirst === undefined ? absolute : fromFirst || ".")
      return Either.left(new AgentFileError({ path: shown, reason, detail }))
    }
    let fd = opened !== undefined ? (opened === notOpened ? undefined : opened) : held === undefined ? undefined : openHeld(absolute, held)
    let real: string
    if (fd !== undefined) {
      real = `${held!.real}${absolute.slice(held!.named.length + 1)}`
    } else {
      const named = placeProblem(absolute, false)
      if (named !== undefined) return fail(named, absolute)
      try {
        real = NodeFs.realpathSync.native(absolute)
      } catch (error) {
        const code = codeOf(error)
        if (code === "ENOENT" || code === "ENOTDIR") return fail("missing", describe(error))
        if (code === "ELOOP") return fail("link-loop", "too many levels of symbolic links (a symlink loop)")
        return fail("unreadable", describe(error))
      }
      const reached = placeProblem(real, true)
      if (reached !== undefined) return fail(reached, real)
      try {
        fd = NodeFs.openSync(real, openFlags)
      } catch (error) {
        const code = codeOf(error)
        if (code === "ENOENT" || code === "ENOTDIR") return fail("missing", describe(error))
        // O_NOFOLLOW: the last component became a symlink after its real path was looked up.
        if (code === "ELOOP" || code === "EMLINK") return fail("link-loop", "a symlink appeared while kern opened it")
        if (code === "ENXIO") return fail("not-regular", "socket or device")
        return fail("unreadable", describe(error))
      }
      // Where the descriptor really points: a link swapped in between the check and the open is caught.
      const opened = openedPath(fd)
      if (opened !== undefined && opened !== real) {
        const swapped = placeProblem(opened, true)
        real = opened
        if (swapped !== undefined) {
          NodeFs.closeSync(fd)
          return fail(swapped, opened)
        }
      }
    }
    try {
      const stat = NodeFs.fstatSync(fd)
      if (!stat.isFile()) return fail("not-regular", kindOf(stat))
      if (stat.nlink > 1) return fail("hard-link", String(stat.nlink))
      if (stat.size > maxBytes) return fail("too-large", `${formatSize(stat.size)}, over ${formatSize(maxBytes)}`)
      // Written out, not spread from one object into another: V8 (node 20) copies a spread through its slow path,
      // ~1.5 µs a file, a tenth of a grep's time per file.
      if (!read) return Either.right({ path: real, size: stat.size, mtimeMs: stat.mtimeMs, dev: stat.dev, ino: stat.ino, bytes: new Uint8Array(0) })
      // One byte past the cap: a file that grew after fstat is seen to be too large, not cut silently.
      const wanted = Math.min(stat.size, maxBytes) + 1
      if (into !== undefined && into.buffer.byteLength < wanted) into.buffer = Buffer.allocUnsafe(Math.max(wanted, Math.min(into.buffer.byteLength * 2, maxBytes + 1)))
      const buffer = into === undefined ? Buffer.allocUnsafe(wanted) : into.buffer
      let filled = 0
      while (filled < wanted) {
        const count = NodeFs.readSync(fd, buffer, filled, wanted - filled, filled)
        if (count === 0) break
        filled += count
        // All fstat saw, under the cap: a further read would only tell whether it grew since.
        if (filled === stat.size && filled < maxBytes) break
      }
      if (filled > maxBytes) return fail("too-large", `over ${formatSize(maxBytes)}`)
      return Either.right({ path: real, size: filled, mtimeMs: stat.mtimeMs, dev: stat.dev, ino: stat.ino, bytes: buffer.subarray(0, filled) })
    } catch (error) {
      return fail("unreadable", describe(error))
    } finally {
      NodeFs.closeSync(fd)
    }
  }
  return { first, open, heldFolder, heldPath }
}

/** A reader for many files under the same options (the file tools' scans): the roots are resolved once. */
export const agentFileReader = (options: AgentFileOptions) => {
  const { first, open } = openerFor(options)
  return (path: string): Either.Either<AgentFileBytes, AgentFileError> => open(resolved(first, path), true)
}

const folderFlags = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | (constants.O_NONBLOCK ?? 0)

/** The scan's files, in the order it will read them: a long enough list is opened ahead in a helper thread. */
export interface ScanPlan {
  readonly paths: ReadonlyArray<string>
  /**
   * The fewest paths worth a helper thread: its start costs ~35 ms of CPU on the other core and it is ready only
   * after that, when a scan of fewer files is about done.
   */
  readonly aheadFrom?: number
  /**
   * Whether the helper starts only when the machine seems to have a core to spare (the default): on a busy machine
   * it gains nothing and costs its start and its share of the cores.
   */
  readonly helper?: "if-idle" | "always"
}

/** Whether the last minute's load leaves some core time free for a helper thread (it is below the core count). */
const coreToSpare = (): boolean => (NodeOs.loadavg()[0] ?? 0) < NodeOs.availableParallelism()

const defaultAheadFrom = 4096
/**
 * How far ahead of the scan the helper may open: the scan's open descriptors (and held folders) stay below it. Far
 * enough that the helper mostly works in other folders than the scan: 64 cost more CPU and gained less (contention
 * in the kernel over the same folder's entries and descriptors).
 */
const aheadWindow = 256

/** A folder held open for the files of the plan from one index to `last`, the highest given to the helper so far. */
interface PlannedFolder {
  readonly fd: number | undefined
  readonly held: HeldFolder | undefined
  last: number
}

/**
 * A reader for a scan over many files, most of them in the same folder as the one before (grep's sorted walk): the
 * same answers as agentFileReader's, and the folder of the last file read is held open, its real path asked of the
 * kernel once for all the files read from it in a row (HeldFolder). Where there is no /proc, every file takes the
 * full way. The bytes answered are the scan's own buffer, valid until its next read. The scope closes the folders
 * held.
 *
 * With a plan (the paths in the order they will be read) of at least `aheadFrom` paths, and a core to spare, a helper
 * thread opens them ahead through their held folders (openAhead.ts); each folder stays held until the scan has read
 * past its last file, so no open through it is under way when it closes. A read off the plan takes the way without
 * it.
 */
export const agentFileScan = (
  options: AgentFileOptions,
  plan?: ScanPlan
): Effect.Effect<(path: string) => Either.Either<AgentFileBytes, AgentFileError>, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => {
        const { first, heldFolder, heldPath, open } = openerFor(options)
        const into = { buffer: Buffer.allocUnsafe(64 * 1024) }
        // This process's own /proc folder, once: the kernel then need not follow /proc/self for every file.
        const own = ownProcess()
        const fds = `/proc/${own ?? "self"}/fd/`
        const holdFolder = (named: string): PlannedFolder => {
          let fd: number
          try {
            fd = NodeFs.openSync(named, folderFlags)
          } catch {
            return { fd: undefined, held: undefined, last: -1 }
          }
          return { fd, held: heldFolder(named, fd, fds), last: -1 }
        }
        const folderOf = (absolute: string) => {
          const slash = absolute.lastIndexOf("/")
          return slash <= 0 ? "/" : absolute.slice(0, slash)
        }

        let folder: string | undefined
        let current: PlannedFolder | undefined
        const releaseCurrent = () => {
          if (current?.fd !== undefined) NodeFs.closeSync(current.fd)
          current = undefined
        }
        const readOffPlan = (absolute: string) => {
          const named = folderOf(absolute)
          if (named !== folder) {
            releaseCurrent()
            folder = named
            current = holdFolder(named)
          }
          return open(absolute, true, current?.held, into)
        }

        const planned = plan !== undefined && own !== undefined && plan.paths.length >= (plan.aheadFrom ?? defaultAheadFrom) &&
            (plan.helper === "always" || coreToSpare())
          ? plan.paths.map((path) => resolved(first, path))
          : undefined
        const ahead: OpenAhead | undefined = planned === undefined ? undefined : makeOpenAhead(planned.length, openFlags)
        const folders: Array<PlannedFolder> = []
        let oldest = 0
        let lastNamed: string | undefined
        let next = 0
        const giveAhead = (helper: OpenAhead, paths: ReadonlyArray<string>) => {
          const given: Array<string> = []
          for (let index = helper.added(); index < paths.length && index < next + aheadWindow; index++) {
            const absolute = paths[index]!
            const named = folderOf(absolute)
            if (named !== lastNamed) {
              lastNamed = named
              folders.push(holdFolder(named))
            }
            const holding = folders[folders.length - 1]!
            holding.last = index
            given.push(holding.held === undefined ? "" : heldPath(absolute, holding.held) ?? "")
          }
          helper.add(given)
        }
        /** Closes the folders whose files are all read (before `index`) and which no open goes through. */
        const closeFolders = (index: number, wait: boolean) => {
          while (oldest < folders.length && folders[oldest]!.last < index && ahead!.settled(folders[oldest]!.last, wait)) {
            const fd = folders[oldest++]!.fd
            if (fd !== undefined) NodeFs.closeSync(fd)
          }
        }

        const read = (path: string) => {
          const absolute = resolved(first, path)
          if (ahead === undefined || planned === undefined || planned[next] !== absolute) return readOffPlan(absolute)
          if (ahead.added() - next <= aheadWindow / 2) giveAhead(ahead, planned)
          const index = next++
          // Rarely, an open the helper began and the scan abandoned still goes through a folder: it is closed later.
          closeFolders(index, folders.length - oldest > aheadWindow)
          let holding = oldest
          while (folders[holding]!.last < index) holding++
          return open(absolute, true, folders[holding]!.held, into, ahead.take(index))
        }
        const release = () => {
          releaseCurrent()
          if (ahead === undefined) return
          // The helper opens nothing more: every folder may close.
          ahead.stop()
          closeFolders(Infinity, true)
        }
        return { read, release }
      }),
      ({ release }) => Effect.sync(release)
    ),
    ({ read }) => read
  )

/** Reads an agent file through the door, synchronously (the file tools' scanning loops). */
export const readAgentFileSync = (path: string, options: AgentFileOptions): Either.Either<AgentFileBytes, AgentFileError> =>
  agentFileReader(options)(path)

/** Reads an agent file through the door. */
export const readAgentFile = (path: string, options: AgentFileOptions): Effect.Effect<AgentFileBytes, AgentFileError> =>
  Effect.suspend(() => agentFileReader(options)(path)).pipe(
    Effect.withSpan("kern.storage.agentFile.read", { attributes: { path } })
  )

/** Reads an agent file through the door as UTF-8 text. */
export const readAgentText = (path: string, options: AgentFileOptions): Effect.Effect<string, AgentFileError> =>
  Effect.map(readAgentFile(path, options), (file) => Buffer.from(file.bytes).toString("utf8"))

/** Checks an agent file through the door without reading it (autoCommit, knowledge's ages). */
export const inspectAgentFile = (path: string, options: AgentFileOptions): Effect.Effect<AgentFile, AgentFileError> =>
  Effect.suspend(() => {
    const { first, open } = openerFor(options)
    return open(NodePath.resolve(first, path), false)
  }).pipe(
    Effect.withSpan("kern.storage.agentFile.inspect", { attributes: { path } })
  )

/**
 * Whether `path` (absolute, or relative to `root`) still names the file the door let through as `seen`,
 * with its size and mtime: the same inode, a regular file with one name. One stat instead of the door's realpaths,
 * open, readlink and fstat, for a reader that keeps what it read and asks every turn whether it changed (the memory
 * file cache). Keeping the text is safe whatever the path leads to now: a swapped link, a FIFO or a device is
 * another inode, a new hard link a second name, an edit a new mtime or size, and each sends the reader back through
 * the door; the same inode unchanged holds only what the door already let through.
 */
export const unchangedAgentFile = (path: string, root: string, seen: AgentFile): boolean => {
  try {
    const stat = NodeFs.statSync(NodePath.resolve(root, path), { throwIfNoEntry: false })
    return stat !== undefined && stat.isFile() && stat.nlink === 1 && stat.dev === seen.dev && stat.ino === seen.ino &&
      stat.size === seen.size && stat.mtimeMs === seen.mtimeMs
  } catch {
    return false
  }
}

/** `fallback` when the file does not exist; refused and unreadable files still fail. */
export const orIfAbsent = <B>(fallback: () => B) =>
<A, R>(effect: Effect.Effect<A, AgentFileError, R>): Effect.Effect<A | B, AgentFileError, R> =>
  Effect.catchIf(effect, (error) => error.reason === "missing", () => Effect.succeed(fallback()))

/**
 * Warns about a skipped file once, not on every turn or pass: again only after it was read fine in between (fixed,
 * then broken again). One per reader that lives long (the turn runner's file cache, recall, the notes summary,
 * autoCommit).
 */
export interface SkippedFiles {
  /** Reports `error` (`what` says which reader skipped it) unless this file was already reported for this reason. */
  readonly skip: (what: string, error: AgentFileError) => Effect.Effect<void>
  /** The file was read fine: a later refusal is reported again. */
  readonly readFine: (path: string) => Effect.Effect<void>
  /** As `readFine`, for several files at once. */
  readonly allReadFine: (paths: ReadonlyArray<string>) => Effect.Effect<void>
}

export const makeSkippedFiles = (
  report: (line: string) => Effect.Effect<void> = (line) => Effect.logWarning(line)
): Effect.Effect<SkippedFiles> =>
  Effect.map(Ref.make<ReadonlyMap<string, AgentFileProblem>>(new Map()), (reported) => ({
    skip: (what, error) =>
      Effect.flatMap(
        Ref.modify(reported, (map) =>
          map.get(error.path) === error.reason ? [false, map] : [true, new Map(map).set(error.path, error.reason)]),
        (fresh) => (fresh ? report(`kern: ${what} left out a file: ${error.message}`) : Effect.void)
      ),
    readFine: (path) => forget(reported, [path]),
    allReadFine: (paths) => forget(reported, paths)
  }))

const forget = (reported: Ref.Ref<ReadonlyMap<string, AgentFileProblem>>, paths: ReadonlyArray<string>) =>
  Ref.update(reported, (map) => {
    if (!paths.some((path) => map.has(path))) return map
    const next = new Map(map)
    for (const path of paths) next.delete(path)
    return next
  })

/** Reports every skip (one-shot commands, where there is no later turn to repeat it). */
export const reportEverySkip = (report: (line: string) => Effect.Effect<void> = (line) => Effect.logWarning(line)): SkippedFiles => ({
  skip: (what, error) => report(`kern: ${what} left out a file: ${error.message}`),
  readFine: () => Effect.void,
  allReadFine: () => Effect.void
})
