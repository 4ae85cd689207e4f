import { spawnSync } from "node:child_process"
import { performance } from "node:perf_hooks"
import { type Bench, median } from "./bench.js"
import { benchAgent, startModelServerProcess } from "./fixtures.js"
import { benchKernBin } from "./kernBuild.js"

// Issue 28, what a user waits for: `kern status` and `kern chat -m hi` while an agent runs in the background
// (`kern start`), each as a whole process against its floor in the same run, alternating sample by sample.

const env = { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", OPENROUTER_API_KEY: "sk-bench" }

/** A process's wall time and peak RSS (GNU time's %M, in KiB, on stderr's last line). */
const measure = (args: ReadonlyArray<string>): { readonly ms: number; readonly rssMiB: number } => {
  const start = performance.now()
  const result = spawnSync("/usr/bin/time", ["-f", "%M", process.execPath, ...args], { encoding: "utf8", env })
  const ms = performance.now() - start
  if (result.status !== 0) throw new Error(`${args.join(" ")} exited ${result.status}: ${result.stderr}`)
  const lines = result.stderr.trim().split("\n")
  return { ms, rssMiB: Number(lines[lines.length - 1]) / 1024 }
}

const kern = (args: ReadonlyArray<string>) => {
  const result = spawnSync(process.execPath, [benchKernBin(), ...args], { encoding: "utf8", env })
  if (result.status !== 0) throw new Error(`kern ${args.join(" ")} exited ${result.status}: ${result.stderr}`)
}

/**
 * The floor of a chat: a plain node process that makes one request like kern's to the same fake model (a streamed
 * chat completion) and reads the whole answer.
 */
const floorScript = (baseURL: string) => `
const body = JSON.stringify({ model: "bench-model", stream: true, messages: [{ role: "user", content: "hi" }] })
fetch(${JSON.stringify(`${baseURL}/chat/completions`)}, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer sk-bench" }, body })
  .then((response) => response.text())
  .then((text) => { if (!text.includes("[DONE]")) { console.error(text); process.exit(1) } })
`

/**
 * `kern status <dir>` against `node -e 0`, one warm-up each, then alternating. The warm-up ask is reported apart
 * (`firstMs`): the first after the folder changed, it cannot be answered from a kept report (statusCache.ts).
 */
const statusAgainstNode = (dir: string) => {
  const status = [benchKernBin(), "status", dir]
  const first = measure(status).ms
  measure(["-e", "0"])
  const samples: Array<number> = []
  const baseline: Array<number> = []
  for (let i = 0; i < runs; i++) {
    samples.push(measure(status).ms)
    baseline.push(measure(["-e", "0"]).ms)
  }
  return { samples, baseline, extra: { firstMs: first } }
}

/** An agent on the fake model, run with `kern start` for `use`, stopped and removed after. */
const withRunningAgent = async <A>(use: (dir: string, baseURL: string) => A): Promise<A> => {
  const server = await startModelServerProcess()
  const agent = benchAgent(undefined, { model: "bench-model", baseURL: server.baseURL, prices })
  try {
    kern(["start", agent.dir])
    try {
      return use(agent.dir, server.baseURL)
    } finally {
      kern(["stop", agent.dir])
    }
  } finally {
    server.child.kill()
    agent.remove()
  }
}

const runs = 7

/** A price for the fake model, so that `kern status` lists no problem (it exits 1 when it does). */
const prices = { "bench-model": { input: 0, output: 0 } }

export const benches: ReadonlyArray<Bench> = [
  {
    name: "chat.remote",
    unit: "ms (whole process)",
    usesBuild: true,
    // `kern chat -m hi` through a running agent: within 2× the floor, at most 80 MiB.
    targets: [{ of: "ratio", atMost: 2 }, { of: "extra.rssMiB", atMost: 80 }],
    run: () =>
      withRunningAgent((dir, baseURL) => {
        const chat = [benchKernBin(), "chat", "-m", "hi", dir]
        const floor = ["-e", floorScript(baseURL)]
        // The first chat writes the client's code cache; one of each warms the file cache.
        measure(chat)
        measure(floor)
        const samples: Array<number> = []
        const baseline: Array<number> = []
        const rss: Array<number> = []
        const floorRss: Array<number> = []
        for (let i = 0; i < runs; i++) {
          const one = measure(chat)
          samples.push(one.ms)
          rss.push(one.rssMiB)
          const base = measure(floor)
          baseline.push(base.ms)
          floorRss.push(base.rssMiB)
        }
        return { samples, baseline, extra: { rssMiB: median(rss), floorRssMiB: median(floorRss) } }
      })
  },
  {
    name: "cli.status.running",
    unit: "ms (whole process)",
    usesBuild: true,
    // `kern status` while the agent runs: within 2× `node -e 0`.
    targets: [{ of: "ratio", atMost: 2 }],
    run: () =>
      withRunningAgent(statusAgainstNode)
  },
  {
    name: "cli.status.idle",
    unit: "ms (whole process)",
    usesBuild: true,
    // `kern status` of an agent that ran once (kern.db there) and is stopped: within 2× `node -e 0`.
    targets: [{ of: "ratio", atMost: 2 }],
    run: async () => {
      const server = await startModelServerProcess()
      const agent = benchAgent(undefined, { model: "bench-model", baseURL: server.baseURL, prices })
      try {
        kern(["chat", "-m", "hi", agent.dir])
        return statusAgainstNode(agent.dir)
      } finally {
        server.child.kill()
        agent.remove()
      }
    }
  }
]
