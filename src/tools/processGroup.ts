import { Duration, Effect } from "effect"
import * as NodeChildProcess from "node:child_process"
import { toolFailure } from "../kernel/ToolFailure.js"
import { describeUnknown } from "./failures.js"

export interface ProcessRun {
  readonly exitCode: number | null
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
}

export interface SpawnOptions {
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
}

export interface StreamBuffer {
  readonly push: (chunk: Buffer) => void
  readonly text: () => string
}

/** What a run has printed so far; the caller keeps it, so a timeout can still show the partial output. */
export interface OutputCapture {
  readonly stdout: StreamBuffer
  readonly stderr: StreamBuffer
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

const killGroup = (pid: number | undefined) => {
  if (pid === undefined) return
  try {
    process.kill(-pid, "SIGKILL")
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * Runs `/bin/bash -c command` as the leader of a new process group. When the command exits, or the effect is
 * interrupted (timeout, cancellation), the whole group is killed, so no background child outlives the call.
 */
export const runInProcessGroup = (command: string, options: SpawnOptions, capture: OutputCapture) =>
  Effect.async<ProcessRun, ReturnType<typeof toolFailure>>((resume) => {
    let child: NodeChildProcess.ChildProcess
    try {
      child = NodeChildProcess.spawn("/bin/bash", ["-c", command], {
        cwd: options.cwd,
        env: { ...options.env },
        detached: true,
        stdio: ["ignore", "pipe", "pipe"]
      })
    } catch (error) {
      resume(Effect.fail(toolFailure("UNEXPECTED", `could not start bash: ${describeUnknown(error)}`)))
      return
    }
    const { stderr, stdout } = capture
    child.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk))
    child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk))
    let exit: { code: number | null; signal: string | null } | undefined
    child.on("error", (error) => {
      resume(Effect.fail(toolFailure("UNEXPECTED", `could not run bash: ${error.message}`)))
    })
    // Background children still hold the pipes open: kill the group at the leader's exit so "close" can come.
    child.on("exit", (code, signal) => {
      exit = { code, signal }
      killGroup(child.pid)
    })
    child.on("close", () => {
      const status = exit ?? { code: child.exitCode, signal: child.signalCode }
      resume(Effect.succeed({ exitCode: status.code, signal: status.signal, stdout: stdout.text(), stderr: stderr.text() }))
    })
    // Interrupted: kill the group, then wait until every process holding the pipes is gone (a bounded wait:
    // a process that left the group with setsid may keep them open, so the pipes are then closed on our side).
    return Effect.async<void>((done) => {
      if (child.stdout?.closed === true && child.stderr?.closed === true) {
        done(Effect.void)
        return
      }
      child.once("close", () => done(Effect.void))
      killGroup(child.pid)
    }).pipe(
      Effect.timeout(Duration.seconds(2)),
      Effect.catchAll(() =>
        Effect.sync(() => {
          child.stdout?.destroy()
          child.stderr?.destroy()
        })
      )
    )
  }).pipe(Effect.withSpan("kern.tools.runInProcessGroup"))
