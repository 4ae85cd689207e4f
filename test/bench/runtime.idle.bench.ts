import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { Bench } from "./bench.js"
import { sleep, waitFor } from "./waitFor.js"
import { benchKernBin } from "./kernBuild.js"
import { benchAgent, startModelServerProcess } from "./fixtures.js"

const root = NodePath.resolve(import.meta.dirname, "../..")
const env = { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", OPENROUTER_API_KEY: "sk-bench" }

/** A process's resident set (VmRSS) in MB, from /proc. */
const rssMb = (pid: number): number => {
  const line = /^VmRSS:\s+(\d+) kB$/m.exec(NodeFs.readFileSync(`/proc/${pid}/status`, "utf8"))
  if (line === null) throw new Error(`no VmRSS for pid ${pid}`)
  return Number(line[1]) / 1024
}

/** Samples of a process's RSS once it is idle: `count` of them, `everyMs` apart. */
const sampleRss = async (pid: number, count: number, everyMs: number) => {
  const samples: Array<number> = []
  for (let i = 0; i < count; i++) {
    if (i > 0) await sleep(everyMs)
    samples.push(rssMb(pid))
  }
  return samples
}

const kern = (args: ReadonlyArray<string>) => {
  const result = spawnSync(process.execPath, [benchKernBin(), ...args], { encoding: "utf8", env })
  if (result.status !== 0) throw new Error(`kern ${args.join(" ")} exited ${result.status}: ${result.stderr}`)
  return result
}

/**
 * The whole process of a background agent (`kern start`) on a fresh folder, idle: serving, its queue and inbox
 * empty. The baseline is a bare `node` process idling on a timer, sampled the same way.
 */
const idleRss = (count: number) => async () => {
  const server = await startModelServerProcess()
  const agent = benchAgent(undefined, { model: "bench-model", baseURL: server.baseURL })
  let bare: ChildProcess | undefined
  try {
    kern(["start", "--dir", agent.dir])
    const record = JSON.parse(NodeFs.readFileSync(NodePath.join(agent.dir, ".kern/agent.pid"), "utf8")) as number | { pid: number }
    const pid = typeof record === "number" ? record : record.pid
    const { port } = JSON.parse(NodeFs.readFileSync(NodePath.join(agent.dir, ".kern/config.json"), "utf8")) as { port: number }
    const token = /KERN_AUTH_TOKEN=(\S+)/.exec(NodeFs.readFileSync(NodePath.join(agent.dir, ".kern/.env"), "utf8"))?.[1] ?? ""
    const base = `http://127.0.0.1:${port}`
    await waitFor("the agent's /health", 60, async () => ((await fetch(`${base}/health`)).ok ? true : undefined))
    await waitFor("an idle agent (nothing queued, the inbox empty)", 60, async () => {
      const response = await fetch(`${base}/status`, { headers: { authorization: `Bearer ${token}` } })
      const status = (await response.json()) as { runtime?: { queued: number; inbox: number } }
      return status.runtime !== undefined && status.runtime.queued === 0 && status.runtime.inbox === 0 ? true : undefined
    })
    const samples = await sampleRss(pid, count, 500)
    bare = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000); process.stdout.write('idle\\n')"], { stdio: ["ignore", "pipe", "inherit"] })
    let said = ""
    bare.stdout?.on("data", (chunk: Buffer) => (said += chunk.toString("utf8")))
    await waitFor("the bare node process", 10, async () => (said.includes("idle") ? true : undefined))
    const baseline = await sampleRss(bare.pid ?? 0, count, 500)
    return { samples, baseline }
  } finally {
    bare?.kill()
    spawnSync(process.execPath, [benchKernBin(), "stop", "--dir", agent.dir], { env, stdio: "ignore" })
    server.child.kill()
    agent.remove()
  }
}

export const benches: ReadonlyArray<Bench> = [
  { name: "runtime.idle.rss", unit: "MB (VmRSS, whole process)", usesBuild: true, run: idleRss(7) }
]
