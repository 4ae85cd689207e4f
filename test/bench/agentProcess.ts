import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { benchKernBin } from "./kernBuild.js"

// What the benches that run real `kern` agents (agent.idle.*, schedule.fire.latency) read of them: the built kern's
// commands, the agent's pid, its CPU time and resident set from /proc, and its HTTP API.

export const benchEnv = { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", OPENROUTER_API_KEY: "sk-bench" }

/** Runs the bench's built kern; a failure throws with its stderr. */
export const kernCommand = (args: ReadonlyArray<string>) => {
  const result = spawnSync(process.execPath, [benchKernBin(), ...args], { encoding: "utf8", env: benchEnv })
  if (result.status !== 0) throw new Error(`kern ${args.join(" ")} exited ${result.status}: ${result.stderr}`)
  return result
}

/** Stops the agent of `dir`, whatever state it is in (a bench's cleanup). */
export const stopAgent = (dir: string) =>
  spawnSync(process.execPath, [benchKernBin(), "stop", "--dir", dir], { env: benchEnv, stdio: "ignore" })

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** User plus system CPU time of a process so far, in ms (clock ticks of 10 ms). */
export const cpuMs = (pid: number): number => {
  const stat = NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/**
 * CPU per minute of two processes side by side, `rounds` windows of `windowMs` each: both are
 * read at the start and end of every window, so the load of the machine weighs on both alike.
 */
export const cpuPerMinute = async (a: number, b: number, rounds: number, windowMs: number) => {
  const samples: Array<number> = []
  const baseline: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    const [a0, b0] = [cpuMs(a), cpuMs(b)]
    await sleep(windowMs)
    const [a1, b1] = [cpuMs(a), cpuMs(b)]
    samples.push((a1 - a0) * 60_000 / windowMs)
    baseline.push((b1 - b0) * 60_000 / windowMs)
  }
  return { samples, baseline }
}

export const rssMb = (pid: number): number => {
  const line = /^VmRSS:\s+(\d+) kB$/m.exec(NodeFs.readFileSync(`/proc/${pid}/status`, "utf8"))
  if (line === null) throw new Error(`no VmRSS for pid ${pid}`)
  return Number(line[1]) / 1024
}

/** The pid of the agent running in `dir` (`.kern/agent.pid`). */
export const pidOf = (dir: string) => {
  const record = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern/agent.pid"), "utf8")) as number | { pid: number }
  return typeof record === "number" ? record : record.pid
}

/** The running agent's HTTP API: its address and the operator's headers. */
export const agentHttp = (dir: string) => {
  const { port } = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern/config.json"), "utf8")) as { port: number }
  const token = /KERN_AUTH_TOKEN=(\S+)/.exec(NodeFs.readFileSync(NodePath.join(dir, ".kern/.env"), "utf8"))?.[1] ?? ""
  return { base: `http://127.0.0.1:${port}`, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } }
}
