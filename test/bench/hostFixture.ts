import { type ChildProcess, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { benchEnv, kernCommand, rssMb } from "./agentProcess.js"
import { type Model, startModel } from "./fixtures.js"

export { type Model, startModel }
import { benchKernBin } from "./kernBuild.js"
import { sleep, waitFor } from "./waitFor.js"

// What the host benches (host.*.bench.ts) share: the fake model in a process of its own that writes when each
// `BENCH-FIRE-<tag>` request arrived, agent folders made by the real `kern init` (with a little memory and a session from
// one real turn), and a real `kern serve` over them with KERN_DEBUG_HOST=1 (GET /host carries the event loop's delay
// and the active resources), read from outside: /proc for RSS and open files, its HTTP API for the rest.


export interface Agents {
  /** name → folder */
  readonly dirs: ReadonlyMap<string, string>
  readonly remove: () => void
}

/**
 * `count` agent folders named `a000`…: one `kern init` (git and all), a line of knowledge, a daily note and a session
 * from one real turn (`kern chat`, the fake model answering), then copied, so each has its own kern.db, session and
 * repository.
 */
export const makeAgents = (count: number, baseURL: string): Agents => {
  const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-bench-host-"))
  const template = NodePath.join(root, "template")
  kernCommand(["init", template, "--model", "bench-model"])
  const configFile = NodePath.join(template, ".kern/config.json")
  NodeFs.writeFileSync(configFile, JSON.stringify({
    ...JSON.parse(NodeFs.readFileSync(configFile, "utf8")),
    baseURL,
    heartbeatInterval: 0,
    autoCommit: false,
    recall: false,
    prices: { "bench-model": { input: 0, output: 0 } }
  }))
  NodeFs.appendFileSync(NodePath.join(template, "KNOWLEDGE.md"), "\n- The router is at 192.168.1.1; backups run at 03:00.\n")
  NodeFs.writeFileSync(NodePath.join(template, "notes/2026-11-22.md"), "# 2026-11-22\n- moved the DHCP range; DNS now on the pi.\n")
  kernCommand(["chat", "--dir", template, "-m", "hello, what do you keep in mind?"])
  const dirs = new Map<string, string>()
  for (let i = 0; i < count; i++) {
    const name = `a${String(i).padStart(3, "0")}`
    const dir = NodePath.join(root, name)
    NodeFs.cpSync(template, dir, { recursive: true })
    dirs.set(name, dir)
  }
  return { dirs, remove: () => NodeFs.rmSync(root, { recursive: true, force: true }) }
}

export interface HostDebugFigures {
  readonly eventLoopDelayMs: { readonly p50: number; readonly p99: number; readonly max: number; readonly samples: number }
  readonly activeResources: Readonly<Record<string, number>>
  readonly heapUsedBytes: number
  readonly heapTotalBytes: number
  readonly externalBytes: number
  readonly arrayBuffersBytes: number
}

export interface HostStatus {
  readonly agents: { readonly total: number; readonly live: number; readonly waking: number; readonly passive: number }
  readonly rssBytes: number
  readonly debug: HostDebugFigures
}

export interface Host {
  readonly pid: number
  readonly child: ChildProcess
  /** GET /host (the debug figures with it; reading them starts the event loop's histogram over). */
  readonly status: () => Promise<HostStatus>
  readonly states: () => Promise<Record<string, string>>
  /** POST /agents/<name>/message, accepted (202) or thrown. */
  readonly send: (name: string, text: string) => Promise<void>
  /** GET /agents/<name>/events held open (an open event stream keeps an agent live), until `close`. */
  readonly holdOpen: (name: string) => Promise<{ readonly close: () => void }>
  readonly rssMb: () => number
  /** Entries of /proc/<pid>/fd: files, sockets, kern.db handles, watchers. */
  readonly openFiles: () => number
  readonly stop: () => Promise<void>
}

/**
 * A real `kern serve` (the bench's build) over `agents` from a host.json of its own, port 0, with KERN_DEBUG_HOST=1;
 * ready once its lock records its address and every agent's token is written (`.kern/.env`, made as it is added).
 */
export const startServe = async (agents: ReadonlyMap<string, string>, idleSeconds: number): Promise<Host> => {
  const home = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-bench-serve-"))
  const config = NodePath.join(home, "host.json")
  NodeFs.writeFileSync(config, JSON.stringify({ agents: Object.fromEntries(agents), port: 0, idleSeconds }))
  const child = spawn(process.execPath, [benchKernBin(), "serve", "--config", config], {
    // --expose-gc: GET /host's debug collects garbage before it reads the heap, so a heap that grows is one that leaks.
    env: { ...benchEnv, KERN_DEBUG_HOST: "1", NODE_OPTIONS: "--expose-gc" },
    stdio: ["ignore", "ignore", "pipe"]
  })
  let stderr = ""
  child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString("utf8")).slice(-20_000)))
  const lock = NodePath.join(home, ".kern-host/host.lock")
  const origin = await waitFor("kern serve's address in its lock", 120, async () => {
    if (child.exitCode !== null) throw new Error(`kern serve exited ${child.exitCode}: ${stderr}`)
    return NodeFs.existsSync(lock) && NodeFs.readFileSync(lock, "utf8").includes("address")
      ? (JSON.parse(NodeFs.readFileSync(lock, "utf8")) as { address: string }).address
      : undefined
  }).catch((error: Error) => {
    throw new Error(`${error.message}\n${stderr}`)
  })
  const hostToken = /KERN_HOST_TOKEN=(\S+)/.exec(NodeFs.readFileSync(NodePath.join(home, ".kern-host/.env"), "utf8"))?.[1] ?? ""
  const get = async <A>(path: string, token: string): Promise<A> => {
    const response = await fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${token}` } })
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${await response.text()}`)
    return (await response.json()) as A
  }
  // The host makes each agent's token as it adds it, after its lock records the address.
  const tokenOf = (name: string) => /KERN_AUTH_TOKEN=(\S+)/.exec(NodeFs.readFileSync(NodePath.join(agents.get(name)!, ".kern/.env"), "utf8"))?.[1]
  await waitFor("every agent's token", 120, async () => ([...agents.keys()].every((name) => tokenOf(name) !== undefined) ? true : undefined))
  const tokens = new Map([...agents.keys()].map((name) => [name, tokenOf(name)!]))
  const agentHeaders = (name: string) => ({ authorization: `Bearer ${tokens.get(name)}`, "content-type": "application/json" })
  const pid = child.pid!
  return {
    pid,
    child,
    status: () => get<HostStatus>("/host", hostToken),
    states: async () =>
      Object.fromEntries((await get<{ agents: Array<{ name: string; state: string }> }>("/agents", hostToken)).agents.map((a) => [a.name, a.state])),
    send: async (name, text) => {
      const response = await fetch(`${origin}/agents/${name}/message`, { method: "POST", headers: agentHeaders(name), body: JSON.stringify({ text }) })
      if (response.status !== 202) throw new Error(`POST /agents/${name}/message answered ${response.status}: ${await response.text()}\n${stderr.slice(-4000)}`)
      await response.arrayBuffer()
    },
    holdOpen: async (name) => {
      const controller = new AbortController()
      const response = await fetch(`${origin}/agents/${name}/events`, { headers: agentHeaders(name), signal: controller.signal })
      if (response.status !== 200) throw new Error(`GET /agents/${name}/events answered ${response.status}`)
      // Read and drop what it sends, so the host's writes never wait on this side.
      const reader = response.body!.getReader()
      const drain = async (): Promise<void> => {
        const { done } = await reader.read()
        if (!done) return drain()
      }
      drain().catch(() => undefined)
      return { close: () => controller.abort() }
    },
    rssMb: () => rssMb(pid),
    openFiles: () => NodeFs.readdirSync(`/proc/${pid}/fd`).length,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve))
        child.kill("SIGTERM")
        await Promise.race([exited, sleep(30_000)])
        child.kill("SIGKILL")
      }
      NodeFs.rmSync(home, { recursive: true, force: true })
    }
  }
}

/** Waits until `check` holds of the agents' states (GET /agents). */
export const untilStates = (host: Host, what: string, seconds: number, check: (states: Record<string, string>) => boolean) =>
  waitFor(what, seconds, async () => (check(await host.states()) ? true : undefined))

/** The load average (1, 5, 15 minutes) as the figures were taken. */
export const loadAverage = () => {
  const [one, five, fifteen] = NodeOs.loadavg()
  return { load1: one!, load5: five!, load15: fifteen! }
}
