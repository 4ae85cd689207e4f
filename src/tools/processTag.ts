import { Data, Duration, Effect, Either, Random } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import { isDeadState, parseProcessStat } from "../storage/processState.js"

/**
 * Finds and kills every process one bash call started, including those that left its process group (`setsid`,
 * double-fork daemons, `nohup … &`): each call's environment carries a tag, `KERN_TOOL_CALL=<id>`, which every
 * descendant inherits, and /proc/<pid>/environ shows it for our own user's processes, re-parented or not. This is
 * what CI runners do to clean up a job. A process that removes the variable from its own environment before
 * exec (`env -u KERN_TOOL_CALL …`) is not found: only a cgroup would hold it, and an unprivileged kern rarely has
 * one to create. Linux only; elsewhere the caller falls back to killing the process group.
 *
 * A tag starts with a key of the agent folder (`<folder key>-<pid>-<random>`), so the next runtime to hold the folder
 * finds what a killed one left running (`reapFolder`): a SIGKILL'd agent runs no finalizer, and its calls' process
 * groups outlive it.
 *
 * The scan reads /proc synchronously: it costs about 3 ms for 100 processes here, where the same reads through
 * async file system calls take 5-15 ms, and it runs once per bash call on the happy path.
 */
export const callTagVariable = "KERN_TOOL_CALL"

export interface KilledProcess {
  readonly pid: number
  /** The executable's name as the kernel reports it (`comm`, at most 15 characters). */
  readonly command: string
  /** Whether it had left the call's process group (setsid, a daemon): killing the group would have missed it. */
  readonly leftGroup: boolean
}

export interface ReapResult {
  readonly killed: ReadonlyArray<KilledProcess>
  /** False when /proc could not be scanned: only the process group was killed. */
  readonly scanned: boolean
  /** Tagged processes still alive after the last round (a process forking faster than it is killed). */
  readonly survivors: number
}

/** /proc could not be read the way the scan needs. */
class ProcScanError extends Data.TaggedError("ProcScanError")<{ readonly reason: string }> {}

/** The first part of every tag of the agent folder `root` (its real path): 12 hex digits of its hash. */
export const folderTagKey = (root: string): string =>
  NodeCrypto.createHash("sha256").update(root).digest("hex").slice(0, 12)

/**
 * A new tag for one call in the agent folder `root` (its real path): the folder key finds a dead runtime's calls, the
 * pid keeps concurrent kern processes apart, the random part the calls of one.
 */
export const makeCallTag = (root: string): Effect.Effect<string> =>
  Effect.map(
    Effect.all([Random.nextIntBetween(0, 0x7fffffff), Random.nextIntBetween(0, 0x7fffffff)]),
    ([high, low]) => `${folderTagKey(root)}-${process.pid}-${high.toString(36)}${low.toString(36)}`
  )

const errnoOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined

/** A process gone meanwhile (ENOENT, ESRCH) or another user's (EACCES, EPERM): not ours to find. */
const notOurs = new Set(["ENOENT", "ESRCH", "EACCES", "EPERM"])

const readProcFile = (path: string): Buffer | undefined => {
  try {
    return NodeFs.readFileSync(path)
  } catch (error) {
    if (notOurs.has(errnoOf(error) ?? "")) return undefined
    throw error
  }
}

/** The live processes whose environment has a variable starting with `needle` (`KERN_TOOL_CALL=<tag>\0`). */
const scanTagged = (needle: Buffer, group: number | undefined): Either.Either<Array<KilledProcess>, ProcScanError> =>
  Either.try({
    try: () => {
      const found: Array<KilledProcess> = []
      for (const entry of NodeFs.readdirSync("/proc")) {
        const first = entry.charCodeAt(0)
        if (first < 48 || first > 57) continue
        const environ = readProcFile(`/proc/${entry}/environ`)
        if (environ === undefined) continue
        const at = environ.indexOf(needle)
        if (at < 0 || (at > 0 && environ[at - 1] !== 0)) continue
        const stat = readProcFile(`/proc/${entry}/stat`)
        const parsed = stat === undefined ? undefined : parseProcessStat(stat.toString("utf8"))
        // A zombie is already dead; its parent reaps it.
        if (parsed === undefined || isDeadState(parsed.state)) continue
        found.push({ pid: Number(entry), command: parsed.command, leftGroup: group !== undefined && parsed.pgrp !== group })
      }
      return found
    },
    catch: (error) => new ProcScanError({ reason: error instanceof Error ? error.message : String(error) })
  })

const signal = (pid: number) => {
  try {
    process.kill(pid, "SIGKILL")
  } catch (error) {
    // ESRCH: gone already, the group included; EPERM: a setuid program it ran, which is not ours to signal.
    const code = errnoOf(error)
    if (code !== "ESRCH" && code !== "EPERM") throw error
  }
}

const maxRounds = 12

/**
 * Kills the process group led by `group` (if any) and every process whose environment holds `needle`, scanning again
 * until none is left (a process may fork while its siblings are killed), in at most 12 rounds.
 */
const killMatching = (needle: Buffer, group: number | undefined): Effect.Effect<ReapResult> =>
  Effect.gen(function*() {
    const killed = new Map<number, KilledProcess>()
    const killGroup = Effect.sync(() => group === undefined ? undefined : signal(-group))
    if (process.platform !== "linux") {
      yield* killGroup
      return { killed: [], scanned: false, survivors: 0 }
    }
    let survivors = 0
    for (let round = 0; round < maxRounds; round++) {
      const found = scanTagged(needle, group)
      yield* killGroup
      if (Either.isLeft(found)) {
        yield* Effect.logWarning(`kern: could not scan /proc for tagged processes: ${found.left.reason}`)
        return { killed: [...killed.values()], scanned: false, survivors: 0 }
      }
      survivors = found.right.length
      if (survivors === 0) break
      for (const tagged of found.right) {
        if (!killed.has(tagged.pid)) killed.set(tagged.pid, tagged)
        yield* Effect.sync(() => signal(tagged.pid))
      }
      // SIGKILL is delivered asynchronously: give the kernel a moment before looking again.
      yield* Effect.sleep(Duration.millis(round < 4 ? 2 : 20))
    }
    return { killed: [...killed.values()], scanned: true, survivors }
  })

/** Kills the process group led by `group` and every process carrying `tag`: what one bash call started. */
export const killTagged = (tag: string, group: number | undefined): Effect.Effect<ReapResult> =>
  (group === undefined
    ? Effect.succeed<ReapResult>({ killed: [], scanned: false, survivors: 0 })
    : killMatching(Buffer.from(`${callTagVariable}=${tag}\0`), group)).pipe(Effect.withSpan("kern.tools.killTagged"))

/**
 * Kills every process a call in the agent folder `root` (its real path) started and left running: what a runtime
 * killed with SIGKILL left behind. Only for the holder of the folder's lock, before it runs a call of its own.
 */
export const reapFolder = (root: string): Effect.Effect<ReapResult> =>
  killMatching(Buffer.from(`${callTagVariable}=${folderTagKey(root)}-`), undefined).pipe(
    Effect.withSpan("kern.tools.reapFolder", { attributes: { root } })
  )

/** `bash (pid 12), sleep (pid 14, had left the process group)`. */
export const describeKilled = (killed: ReadonlyArray<KilledProcess>): string =>
  killed.map((p) => `${p.command} (pid ${p.pid}${p.leftGroup ? ", had left the process group" : ""})`).join(", ")

/**
 * Kills every process carrying `tag`, found through /proc alone: what a long-lived child started without a process
 * group of its own (an MCP server over stdio) left when it is stopped.
 */
export const reapTag = (tag: string): Effect.Effect<ReapResult> =>
  killMatching(Buffer.from(`${callTagVariable}=${tag}\0`), undefined).pipe(Effect.withSpan("kern.tools.reapTag"))
