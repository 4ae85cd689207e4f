// Runs one command as a whole process and measures what a user waits for and pays: wall time from spawn to exit, and
// the peak resident memory of its whole process tree, sampled every `intervalMs` from /proc (procTree.ts).
import { spawn } from "node:child_process"
import { performance } from "node:perf_hooks"
import { pageSize, treeRssBytes } from "./procTree.js"

export interface Invocation {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  /** Killed (its whole process group) after this long; the outcome says `timedOut`. */
  readonly timeoutMs: number
}

export interface Measured {
  readonly wallMs: number
  readonly peakRssBytes: number
  /** null when it was killed by a signal or could not start. */
  readonly exitCode: number | null
  readonly signal: string | null
  readonly timedOut: boolean
  readonly stdout: string
  readonly stderr: string
}

export interface MeasureOptions {
  readonly intervalMs?: number
  /** Called with the pid once the process runs. */
  readonly onStart?: (pid: number) => void
  /** Called after each sample with the peak so far (bytes): what a caller waits on to know the peak was seen. */
  readonly onSample?: (peakBytes: number) => void
}

const killGroup = (pid: number) => {
  try {
    process.kill(-pid, "SIGKILL")
  } catch {
    // The group is gone already: nothing was left running.
  }
}

/**
 * Never rejects: a command that cannot start resolves with `exitCode: null` and the reason in `stderr`. The command
 * runs in a process group of its own, killed once the command has exited, so nothing it left running (a server
 * it started) carries into the next measurement.
 */
export const measure = (invocation: Invocation, options: MeasureOptions = {}): Promise<Measured> =>
  new Promise((resolve) => {
    const bytesPerPage = pageSize()
    const start = performance.now()
    const child = spawn(invocation.command, [...invocation.args], {
      cwd: invocation.cwd,
      env: invocation.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true
    })
    const stdout: Array<Buffer> = []
    const stderr: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk))
    let peak = 0
    let timedOut = false
    const pid = child.pid
    const sample = () => {
      if (pid !== undefined) peak = Math.max(peak, treeRssBytes(pid, bytesPerPage))
      options.onSample?.(peak)
    }
    const sampler = setInterval(sample, options.intervalMs ?? 50)
    const timeout = setTimeout(() => {
      timedOut = true
      if (pid !== undefined) killGroup(pid)
    }, invocation.timeoutMs)
    if (pid !== undefined) {
      sample()
      options.onStart?.(pid)
    }
    let wallMs = 0
    let exit: { code: number | null; signal: string | null } = { code: null, signal: null }
    child.on("exit", (code, signal) => {
      wallMs = performance.now() - start
      exit = { code, signal }
      clearInterval(sampler)
      clearTimeout(timeout)
      if (pid !== undefined) killGroup(pid)
    })
    child.on("error", (error) => {
      clearInterval(sampler)
      clearTimeout(timeout)
      resolve({ wallMs: performance.now() - start, peakRssBytes: 0, exitCode: null, signal: null, timedOut, stdout: "", stderr: String(error) })
    })
    // After the exit, once its output is all read.
    child.on("close", () =>
      resolve({
        wallMs,
        peakRssBytes: peak,
        exitCode: exit.code,
        signal: exit.signal,
        timedOut,
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8")
      }))
  })

/** Why a measured command failed, in a line or a few: its last lines of stderr (npm's `npm error` lines first). */
export const failureReason = (measured: Measured): string => {
  const how = measured.timedOut
    ? "timed out"
    : measured.exitCode === null
    ? measured.signal === null ? "could not start" : `killed by ${measured.signal}`
    : `exit ${measured.exitCode}`
  // ANSI colour sequences, which opencode and npm write.
  const text = `${measured.stderr}\n${measured.stdout}`.replace(/\x1b\[[0-9;]*m/g, "")
  const lines = text.split("\n").map((line) => line.trim()).filter((line) => line !== "")
  const npm = lines.filter((line) => line.startsWith("npm error") && !line.includes("complete log"))
  const shown = (npm.length > 0 ? npm.slice(0, 6) : lines.slice(-4)).join(" | ")
  return shown === "" ? how : `${how}: ${shown}`
}
