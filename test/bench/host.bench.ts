import { Duration } from "effect"
import { reclaimQuiet } from "../../src/host/HostAgents.js"
import { median } from "./bench.js"
import type { Bench } from "./bench.js"
import { type Host, loadAverage, makeAgents, type Model, startModel, startServe, untilStates } from "./hostFixture.js"
import { sleep } from "./waitFor.js"

// Issue 34's figures for many agents in one `kern serve` (the bench's build, a real process, KERN_DEBUG_HOST=1), the
// agents' folders made by `kern init` with a little memory and a session, their model the fake server in a process of
// its own:
//
// - host.100agents: the host's RSS with 100 agents, each woken once by a message its model answered, 90 of them
//   passivated since and 10 kept active (an open event stream each, and a message answered every round). The RSS an
//   idle agent costs is (that host − a host of the same 10 active agents alone, woken and driven the same way) / 90:
//   what waking and passivating the 90 left behind, their records included. Floor: an empty `kern serve`.
// - host.wake.latency: a message POSTed to a passivated agent → its turn's request at the model, against the same for
//   a live agent of the same host (the floor), alternating. Each round is a wake/passivate cycle of the passivated
//   agent: the host's RSS, open files and active resources after each passivation are the leak figures (growth from
//   the 5th cycle to the last: flat is no leak).
// - host.eventloop.p99: the host's event-loop delay p99 (perf_hooks' histogram inside the host, GET /host's debug)
//   over windows while 10 agents run turns back to back (the fake model streaming each answer), against windows of the
//   same host with the same 10 agents live and nothing to do.
//
// The load average when the figures were taken is reported with them (2 cores shared with other work).

let tags = 0
const nextTag = (prefix: string) => `${prefix}${++tags}`

/** A message to `name` until its turn reached the model: ms from sending to then. */
const turn = async (host: Host, model: Model, name: string, prefix: string) => {
  const tag = nextTag(prefix)
  const sentAt = Date.now()
  await host.send(name, `BENCH-FIRE-${tag}`)
  return (await model.arrivalOf(tag)) - sentAt
}

/** Every agent named woken by a message its model answered, `width` at a time. */
const wakeAll = async (host: Host, model: Model, names: ReadonlyArray<string>, width: number) => {
  for (let i = 0; i < names.length; i += width) {
    await Promise.all(names.slice(i, i + width).map((name) => turn(host, model, name, "w")))
  }
}

const mb = (bytes: number) => bytes / (1024 * 1024)

const hundredAgents = (rounds: number) => async () => {
  const model = await startModel()
  const agents = makeAgents(100, model.baseURL)
  const names = [...agents.dirs.keys()]
  const active = names.slice(0, 10)
  const hosts: Array<Host> = []
  try {
    // The floor: `kern serve` with no agent.
    const empty = await startServe(new Map(), 2)
    hosts.push(empty)
    await sleep(3_000)
    const baseline: Array<number> = []
    for (let i = 0; i < rounds; i++) {
      baseline.push(empty.rssMb())
      await sleep(1_000)
    }
    await empty.stop()

    /** The host over `hosted`, every one woken once, all but the active ones passivated since, RSS per round. */
    const measure = async (hosted: ReadonlyArray<string>) => {
      const host = await startServe(new Map(hosted.map((name) => [name, agents.dirs.get(name)!])), 2)
      hosts.push(host)
      await wakeAll(host, model, hosted, 10)
      const streams = await Promise.all(active.map((name) => host.holdOpen(name)))
      // The active ones are kept live by their streams and woken again by each round's message if they were not.
      await untilStates(host, "the idle agents passivated", 600, (states) =>
        Object.entries(states).every(([name, state]) => active.includes(name) || state === "passive"))
      const rss: Array<number> = []
      for (let round = 0; round < rounds; round++) {
        await Promise.all(active.map((name) => turn(host, model, name, "r")))
        // The turns end after their request reached the model: let them finish and the heap settle.
        await sleep(3_000)
        rss.push(host.rssMb())
      }
      const status = await host.status()
      const figures = { rss, openFiles: host.openFiles(), heapUsedMb: mb(status.debug.heapUsedBytes), timers: status.debug.activeResources["Timeout"] ?? 0 }
      for (const stream of streams) stream.close()
      await host.stop()
      return figures
    }
    const all = await measure(names)
    const load = loadAverage()
    const activeOnly = await measure(active)
    const perIdleKb = (median(all.rss) - median(activeOnly.rss)) * 1024 / (names.length - active.length)
    return {
      samples: all.rss,
      baseline,
      extra: {
        rssPerIdleAgentKb: perIdleKb,
        rss10ActiveOnlyMb: median(activeOnly.rss),
        heapUsed100Mb: all.heapUsedMb,
        heapUsed10Mb: activeOnly.heapUsedMb,
        heapPerIdleAgentKb: (all.heapUsedMb - activeOnly.heapUsedMb) * 1024 / (names.length - active.length),
        openFiles100: all.openFiles,
        openFiles10: activeOnly.openFiles,
        timers100: all.timers,
        timers10: activeOnly.timers,
        ...load
      }
    }
  } finally {
    for (const host of hosts) await host.stop()
    model.stop()
    agents.remove()
  }
}

const wakeLatency = (rounds: number) => async () => {
  const model = await startModel()
  const agents = makeAgents(2, model.baseURL)
  const [cold, warm] = [...agents.dirs.keys()] as [string, string]
  const host = await startServe(agents.dirs, 1)
  try {
    const stream = await host.holdOpen(warm)
    // First turns of each (what a process loads once), not counted.
    await wakeAll(host, model, [cold, warm], 2)
    const samples: Array<number> = []
    const baseline: Array<number> = []
    const rss: Array<number> = []
    const files: Array<number> = []
    const resources: Array<number> = []
    const timers: Array<number> = []
    const heap: Array<number> = []
    for (let round = 0; round < rounds; round++) {
      await untilStates(host, `${cold} passivated`, 120, (states) => states[cold] === "passive" && states[warm] === "live")
      // Each cycle's figures are taken in the same state: after the host gave back what the passivated agent held
      // (reclaimQuiet after the passivation; its timer pending or not made a timer's difference between cycles).
      await sleep(Duration.toMillis(reclaimQuiet) + 1_000)
      rss.push(host.rssMb())
      files.push(host.openFiles())
      const status = await host.status()
      resources.push(Object.values(status.debug.activeResources).reduce((a, b) => a + b, 0))
      timers.push(status.debug.activeResources["Timeout"] ?? 0)
      heap.push(mb(status.debug.heapUsedBytes))
      samples.push(await turn(host, model, cold, "c"))
      // The cold agent's turn ends before the warm one is asked (they share the host's event loop).
      await sleep(500)
      baseline.push(await turn(host, model, warm, "h"))
    }
    stream.close()
    const from = Math.min(4, rounds - 1)
    const last = rounds - 1
    return {
      samples,
      baseline,
      extra: {
        cycles: rounds,
        rssAfterCycle5Mb: rss[from]!,
        rssAfterLastCycleMb: rss[last]!,
        rssGrowthMb: rss[last]! - rss[from]!,
        heapAfterCycle5Mb: heap[from]!,
        heapGrowthMb: heap[last]! - heap[from]!,
        openFilesGrowth: files[last]! - files[from]!,
        activeResourcesGrowth: resources[last]! - resources[from]!,
        timersGrowth: timers[last]! - timers[from]!,
        ...loadAverage()
      }
    }
  } finally {
    await host.stop()
    model.stop()
    agents.remove()
  }
}

const eventLoop = (rounds: number, windowMs: number) => async () => {
  const model = await startModel()
  const agents = makeAgents(10, model.baseURL)
  const names = [...agents.dirs.keys()]
  // idleSeconds 600: the agents stay live through the idle windows.
  const host = await startServe(agents.dirs, 600)
  try {
    await wakeAll(host, model, names, 10)
    await sleep(2_000)
    const samples: Array<number> = []
    const baseline: Array<number> = []
    const maxBusy: Array<number> = []
    let turns = 0
    let busyMs = 0
    for (let round = 0; round < rounds; round++) {
      await host.status()
      await sleep(windowMs)
      baseline.push((await host.status()).debug.eventLoopDelayMs.p99)
      const start = Date.now()
      const end = start + windowMs
      // Each agent: a message, and the next as soon as the model has the request of the one before.
      await Promise.all(names.map(async (name) => {
        while (Date.now() < end) {
          await turn(host, model, name, "e")
          turns++
        }
      }))
      const figures = (await host.status()).debug.eventLoopDelayMs
      busyMs += Date.now() - start
      samples.push(figures.p99)
      maxBusy.push(figures.max)
      // What is queued still runs: let it finish before the next idle window.
      await sleep(3_000)
    }
    return { samples, baseline, extra: { maxDelayBusyMs: Math.max(...maxBusy), turnsPerSecond: turns * 1000 / busyMs, ...loadAverage() } }
  } finally {
    await host.stop()
    model.stop()
    agents.remove()
  }
}

export const benches: ReadonlyArray<Bench> = [
  {
    name: "host.100agents",
    unit: "MB RSS (100 agents: 10 active, 90 woken once and passivated; baseline: an empty kern serve)",
    usesBuild: true,
    targets: [{ of: "extra.rssPerIdleAgentKb", atMost: 1024 }],
    run: hundredAgents(5)
  },
  {
    name: "host.wake.latency",
    unit: "ms message POSTed → first model request, passivated agent (baseline: a live agent of the same host)",
    usesBuild: true,
    // A passivated agent leaves nothing behind: after 20 wake/passivate cycles no open file or timer more than after 5.
    targets: [{ of: "extra.openFilesGrowth", atMost: 0 }, { of: "extra.timersGrowth", atMost: 0 }],
    run: wakeLatency(20)
  },
  {
    name: "host.eventloop.p99",
    unit: "ms event-loop delay p99 while 10 agents run turns (baseline: the same host, its 10 agents idle)",
    usesBuild: true,
    run: eventLoop(4, 6_000)
  }
]
