// `npm run bench:peers [-- --runs N] [-- --peers kern,opencode]`: kern against the agents a user would pick instead,
// on the same fake model. Each peer is installed from npm into a temporary folder of its own (kern from `npm pack` of
// this repository), then sent one message, "hi", in a fresh project/agent folder per run, the peers alternating run by
// run. Each run is measured as a whole process: wall time from spawn to exit and the peak resident memory of its whole
// process tree (/proc, every 50 ms). The first run of each peer is its cold run, reported apart. Prints a table and
// writes bench-peers-results.json. A peer that cannot be installed, or whose runs fail, is reported with the reason.
// Not part of CI: it installs from the network (several minutes: kern's better-sqlite3 may compile).
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { startModelServerProcess } from "../fixtures.js"
import { failureReason, measure } from "./measure.js"
import { allPeers, type Installed, type Peer } from "./peers.js"
import { formatReport, type PeerResult, type RunSample, summarizePeer } from "./report.js"

const root = NodePath.resolve(import.meta.dirname, "../../..")
const args = process.argv.slice(2).filter((arg) => arg !== "--")
const option = (name: string) => {
  const index = args.indexOf(name)
  return index === -1 ? undefined : args[index + 1]
}
const runs = Number(option("--runs") ?? "5")
const chosen = option("--peers")?.split(",").map((name) => name.trim()) ?? allPeers.map((peer) => peer.name)
const unknown = chosen.filter((name) => !allPeers.some((peer) => peer.name === name))
if (!Number.isInteger(runs) || runs < 1 || unknown.length > 0) {
  process.stderr.write(
    `usage: npm run bench:peers [-- --runs N (≥ 1, default 5)] [-- --peers ${allPeers.map((peer) => peer.name).join(",")}]` +
      (unknown.length > 0 ? `\nunknown peer: ${unknown.join(", ")}` : "") + "\n"
  )
  process.exit(2)
}
const peers = allPeers.filter((peer) => chosen.includes(peer.name))
const log = (line: string) => process.stderr.write(`${line}\n`)
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

const scratch = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-bench-peers-"))
const server = await startModelServerProcess()
log(`fake model at ${server.baseURL}; peers installed under ${scratch}`)

interface Running {
  readonly peer: Peer
  readonly installed: Installed
  readonly installMs: number
  cold: RunSample | undefined
  readonly samples: Array<RunSample>
  readonly failures: Array<string>
}

const runOnce = async (running: Running): Promise<RunSample | string> => {
  const runDir = NodeFs.mkdtempSync(NodePath.join(scratch, `${running.peer.name}-run-`))
  try {
    const invocation = await running.installed.prepare(runDir)
    const result = await measure(invocation)
    if (result.exitCode !== 0) return failureReason(result)
    // The fake model answers "ok": a run that does not show it did not make the round trip.
    if (!result.stdout.includes("ok")) return `exit 0 without the model's reply "ok" on stdout: ${result.stdout.slice(0, 200)}`
    return { wallMs: result.wallMs, rssMiB: result.peakRssBytes / (1024 * 1024) }
  } catch (error) {
    return messageOf(error)
  } finally {
    NodeFs.rmSync(runDir, { recursive: true, force: true })
  }
}

try {
  const unavailable: Array<PeerResult> = []
  const running: Array<Running> = []
  for (const peer of peers) {
    const work = NodeFs.mkdtempSync(NodePath.join(scratch, `${peer.name}-`))
    const started = performance.now()
    try {
      const installed = await peer.install({ work, baseURL: server.baseURL, repo: root, log })
      running.push({ peer, installed, installMs: performance.now() - started, cold: undefined, samples: [], failures: [] })
      log(`${peer.name} ${installed.version} installed in ${((performance.now() - started) / 1000).toFixed(0)} s`)
    } catch (error) {
      unavailable.push({ _tag: "Unavailable", name: peer.name, reason: messageOf(error) })
      log(`${peer.name}: not measured: ${messageOf(error)}`)
    }
  }

  // Round 0 is each peer's cold run; the order flips every round so neither peer always runs right after the other.
  for (let round = 0; round <= runs; round++) {
    const order = round % 2 === 0 ? running : [...running].reverse()
    for (const peer of order) {
      const outcome = await runOnce(peer)
      if (typeof outcome === "string") {
        peer.failures.push(round === 0 ? `cold run: ${outcome}` : outcome)
        log(`${peer.peer.name} run ${round}: failed: ${outcome}`)
      } else {
        if (round === 0) peer.cold = outcome
        else peer.samples.push(outcome)
        log(`${peer.peer.name} run ${round}${round === 0 ? " (cold)" : ""}: ${(outcome.wallMs / 1000).toFixed(2)} s, ${outcome.rssMiB.toFixed(0)} MiB`)
      }
    }
  }

  const results: Array<PeerResult> = [
    ...running.map((peer): PeerResult => ({
      _tag: "Measured",
      name: peer.peer.name,
      version: peer.installed.version,
      notes: peer.installed.notes,
      installMs: peer.installMs,
      cold: peer.cold,
      samples: peer.samples,
      failures: peer.failures
    })),
    ...unavailable
  ]
  process.stdout.write(formatReport(results, "kern"))
  const out = NodePath.join(root, "bench-peers-results.json")
  const report = {
    at: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform} ${process.arch}, ${NodeOs.cpus().length} cores`,
    message: "hi",
    model: "the fake model of test/support (OpenAI Chat Completions, streaming), answering \"ok\"",
    runs,
    peers: results.map((result) => (result._tag === "Measured" ? { ...result, summary: summarizePeer(result) } : result))
  }
  NodeFs.writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`)
  log(`wrote ${out}`)
} finally {
  server.child.kill()
  NodeFs.rmSync(scratch, { recursive: true, force: true })
}
// The fake server's pipes keep the event loop alive after its child is killed.
process.exit(0)
