import { Deferred, Effect, Exit, FiberId } from "effect"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import { describeUnknown } from "./failures.js"
import { callTagVariable } from "./processTag.js"

/**
 * One background job's process: `/bin/bash -c command` leading a new process group, tagged like a bash call
 * (processTag.ts), its stdout and stderr appended as they come to one file (so a job running when the agent dies
 * leaves its output so far on disk), up to a byte cap past which the rest is dropped with a marker; the last bytes
 * are also kept in memory for the report. Node's pipe events feed the file: no timer, no polling.
 */
export interface JobProcess {
  readonly pid: number | undefined
  readonly exited: Deferred.Deferred<{ readonly code: number | null; readonly signal: string | null }, ToolFailure>
  readonly closed: Deferred.Deferred<void>
  /** Bytes written to the file, bytes dropped past the cap, the last bytes of all output. */
  readonly counts: () => { readonly bytes: number; readonly dropped: number }
  readonly tail: () => string
  /** Closes our ends of the pipes and the output file (after the processes are killed). */
  readonly close: () => void
}

export interface JobSpawn {
  readonly command: string
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  readonly tag: string
  readonly outputFile: string
  readonly maxOutputBytes: number
}

const tailBytes = 4096

/** The line that replaces what a job printed past `jobs.maxOutputBytes`. */
export const droppedMarker = (cap: number) =>
  `\n[... output past jobs.maxOutputBytes (${cap} bytes) dropped from here on ...]\n`

export const spawnJob = (options: JobSpawn): Effect.Effect<JobProcess, ToolFailure> =>
  Effect.try({
    try: (): JobProcess => {
      const fd = NodeFs.openSync(options.outputFile, "a", 0o600)
      let bytes = 0
      let dropped = 0
      let tail = Buffer.alloc(0)
      let open = true
      const push = (chunk: Buffer) => {
        tail = Buffer.concat([tail, chunk])
        if (tail.byteLength > tailBytes) tail = tail.subarray(tail.byteLength - tailBytes)
        const room = options.maxOutputBytes - bytes
        const kept = room > 0 ? chunk.subarray(0, room) : Buffer.alloc(0)
        if (kept.byteLength > 0 && open) NodeFs.writeSync(fd, kept)
        bytes += kept.byteLength
        if (kept.byteLength < chunk.byteLength) {
          if (dropped === 0 && open) NodeFs.writeSync(fd, droppedMarker(options.maxOutputBytes))
          dropped += chunk.byteLength - kept.byteLength
        }
      }
      const child = NodeChildProcess.spawn("/bin/bash", ["-c", options.command], {
        cwd: options.cwd,
        env: { ...options.env, [callTagVariable]: options.tag },
        detached: true,
        stdio: ["ignore", "pipe", "pipe"]
      })
      const exited: JobProcess["exited"] = Deferred.unsafeMake(FiberId.none)
      const closed: JobProcess["closed"] = Deferred.unsafeMake(FiberId.none)
      child.stdout?.on("data", push)
      child.stderr?.on("data", push)
      child.on("error", (error) => {
        Deferred.unsafeDone(exited, Exit.fail(toolFailure("UNEXPECTED", `could not run bash: ${error.message}`)))
        Deferred.unsafeDone(closed, Exit.void)
      })
      child.on("exit", (code, signal) => Deferred.unsafeDone(exited, Exit.succeed({ code, signal })))
      child.on("close", () => Deferred.unsafeDone(closed, Exit.void))
      return {
        pid: child.pid,
        exited,
        closed,
        counts: () => ({ bytes, dropped }),
        tail: () => tail.toString("utf8"),
        close: () => {
          child.stdout?.destroy()
          child.stderr?.destroy()
          if (open) NodeFs.closeSync(fd)
          open = false
        }
      }
    },
    catch: (error) => toolFailure("UNEXPECTED", `could not start the background job: ${describeUnknown(error)}`)
  })

/** The last `bytes` of a file (a job's output so far), empty when it is gone. */
export const fileTail = (file: string, bytes = tailBytes): string => {
  if (!NodeFs.existsSync(file)) return ""
  try {
    const size = NodeFs.statSync(file).size
    const fd = NodeFs.openSync(file, "r")
    try {
      const length = Math.min(size, bytes)
      const buffer = Buffer.alloc(length)
      NodeFs.readSync(fd, buffer, 0, length, size - length)
      return buffer.toString("utf8")
    } finally {
      NodeFs.closeSync(fd)
    }
  } catch (error) {
    return `(the output so far could not be read from ${file}: ${describeUnknown(error)})`
  }
}
