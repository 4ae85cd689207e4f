import { Deferred, Duration, Effect, Exit, FiberId, Option } from "effect"
import * as NodeChildProcess from "node:child_process"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import { describeUnknown } from "./failures.js"
import { callTagVariable, killTagged, type ReapResult } from "./processTag.js"

export interface ProcessRun {
  readonly exitCode: number | null
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
  /** The command ran past its timeout; it and everything it started were killed. */
  readonly timedOut: boolean
  /** What was killed at the end: on timeout the command itself too; otherwise what it left running. */
  readonly reaped: ReapResult
  /** The output pipes were still held open, after the kill, by a process that could not be found. */
  readonly pipesHeld: boolean
}

export interface SpawnOptions {
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  /** Put in the environment as KERN_TOOL_CALL; every process carrying it is killed when the call ends. */
  readonly tag: string
  readonly timeoutMs: number
  readonly maxStreamBytes: number
}

export interface StreamBuffer {
  readonly push: (chunk: Buffer) => void
  readonly text: () => string
}

/** Keeps the head and the tail of a stream within a byte cap (the first and last halves, the middle dropped). */
export const streamBuffer = (cap: number): StreamBuffer => {
  const head: Array<Buffer> = []
  let headBytes = 0
  const tail: Array<Buffer> = []
  let tailBytes = 0
  let dropped = 0
  const half = Math.floor(cap / 2)
  return {
    push: (chunk: Buffer) => {
      if (headBytes < half) {
        const take = chunk.subarray(0, half - headBytes)
        head.push(take)
        headBytes += take.byteLength
        chunk = chunk.subarray(take.byteLength)
      }
      if (chunk.byteLength === 0) return
      tail.push(chunk)
      tailBytes += chunk.byteLength
      while (tailBytes > half && tail.length > 0) {
        const first = tail[0] ?? Buffer.alloc(0)
        const excess = tailBytes - half
        if (first.byteLength <= excess) {
          tail.shift()
          tailBytes -= first.byteLength
          dropped += first.byteLength
        } else {
          tail[0] = first.subarray(excess)
          tailBytes -= excess
          dropped += excess
        }
      }
    },
    text: () => {
      const start = Buffer.concat(head).toString("utf8")
      const end = Buffer.concat(tail).toString("utf8")
      return dropped === 0 ? start + end : `${start}\n[... ${dropped} bytes of output dropped ...]\n${end}`
    }
  }
}

interface Running {
  readonly child: NodeChildProcess.ChildProcess
  readonly stdout: StreamBuffer
  readonly stderr: StreamBuffer
  readonly exited: Deferred.Deferred<{ readonly code: number | null; readonly signal: string | null }, ToolFailure>
  readonly closed: Deferred.Deferred<void>
}

/** After the kill, how long the pipes may stay open before they are closed on our side. */
const pipeGrace = Duration.seconds(1)

const start = (command: string, options: SpawnOptions) =>
  Effect.try({
    try: (): Running => {
      const child = NodeChildProcess.spawn("/bin/bash", ["-c", command], {
        cwd: options.cwd,
        env: { ...options.env, [callTagVariable]: options.tag },
        detached: true,
        stdio: ["ignore", "pipe", "pipe"]
      })
      const running: Running = {
        child,
        stdout: streamBuffer(options.maxStreamBytes),
        stderr: streamBuffer(options.maxStreamBytes),
        exited: Deferred.unsafeMake(FiberId.none),
        closed: Deferred.unsafeMake(FiberId.none)
      }
      child.stdout?.on("data", (chunk: Buffer) => running.stdout.push(chunk))
      child.stderr?.on("data", (chunk: Buffer) => running.stderr.push(chunk))
      child.on("error", (error) => {
        Deferred.unsafeDone(running.exited, Exit.fail(toolFailure("UNEXPECTED", `could not run bash: ${error.message}`)))
        Deferred.unsafeDone(running.closed, Exit.void)
      })
      child.on("exit", (code, signal) => Deferred.unsafeDone(running.exited, Exit.succeed({ code, signal })))
      child.on("close", () => Deferred.unsafeDone(running.closed, Exit.void))
      return running
    },
    catch: (error) => toolFailure("UNEXPECTED", `could not start bash: ${describeUnknown(error)}`)
  })

/** Closes our ends of the output pipes, which a process we could not find may hold open. */
const closePipes = (running: Running) =>
  Effect.sync(() => {
    running.child.stdout?.destroy()
    running.child.stderr?.destroy()
  })

/** Kills what the call started, then waits a bounded time for the pipes, closing them on our side at the end. */
const finish = (running: Running, tag: string) =>
  Effect.gen(function*() {
    const reaped = yield* killTagged(tag, running.child.pid)
    const closed = yield* Deferred.await(running.closed).pipe(Effect.timeoutOption(pipeGrace))
    if (Option.isNone(closed)) yield* closePipes(running)
    return { reaped, pipesHeld: Option.isNone(closed) }
  })

/**
 * Runs `/bin/bash -c command` as the leader of a new process group, with a tag in its environment. When the
 * command exits, when it runs past its timeout, and when the effect is interrupted, the group and every process
 * carrying the tag are killed, so nothing it started outlives the call, whatever left the group; the call returns
 * at its timeout even when a process holds the output pipes open.
 */
export const runInProcessGroup = (command: string, options: SpawnOptions): Effect.Effect<ProcessRun, ToolFailure> =>
  Effect.acquireUseRelease(
    start(command, options),
    (running) =>
      Effect.gen(function*() {
        const exit = yield* Deferred.await(running.exited).pipe(Effect.timeoutOption(Duration.millis(options.timeoutMs)))
        const { pipesHeld, reaped } = yield* finish(running, options.tag)
        const status = Option.getOrElse(exit, () => ({ code: null, signal: "SIGKILL" }))
        return {
          exitCode: status.code,
          signal: status.signal,
          stdout: running.stdout.text(),
          stderr: running.stderr.text(),
          timedOut: Option.isNone(exit),
          reaped,
          pipesHeld
        } satisfies ProcessRun
      }),
    // Interrupted (or failed) before `finish`: kill everything, and do not wait for the pipes.
    (running, exit) =>
      Exit.isSuccess(exit)
        ? Effect.void
        : Effect.zipRight(killTagged(options.tag, running.child.pid), closePipes(running))
  ).pipe(Effect.withSpan("kern.tools.runInProcessGroup"))
