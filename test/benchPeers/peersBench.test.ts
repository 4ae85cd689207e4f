import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { failureReason, measure } from "../bench/peers/measure.js"
import { parseStat, type ProcEntry, treeOf } from "../bench/peers/procTree.js"
import { formatReport, type PeerResult } from "../bench/peers/report.js"
import { makeTempDir } from "../support/tempDir.js"
import { waitUntil } from "../support/waitFor.js"

// The parts of the peers benchmark (test/bench/peers, `npm run bench:peers`) that run offline: the process-tree RSS
// sampler, the measurement of a whole process, the report. The benchmark itself installs from npm, so it is not here.

const mib = 1024 * 1024
const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe("procTree", () => {
  it("reads pid, ppid and rss from /proc/<pid>/stat whatever the command name holds", () => {
    const tail = "S 77 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 500 123456789 2560 18446744073709551615"
    for (const comm of ["node", "a b", "a) (b", "x)", ") S 99 (", "((", "MainThread", ""]) {
      expect(parseStat(`1234 (${comm}) ${tail}\n`)).toEqual({ pid: 1234, ppid: 77, rssPages: 2560 })
    }
    for (const broken of ["", "1234", "1234 (node", "abc (node) S 1", "1234 (node) S", "1234 (node) S x 1"]) {
      expect(parseStat(broken)).toBeUndefined()
    }
    expect(parseStat(NodeFs.readFileSync(`/proc/${process.pid}/stat`, "utf8"))).toMatchObject({ pid: process.pid, ppid: process.ppid })
  })

  it("the tree of a process is it and every process below it, not its parent, siblings or strangers", () => {
    const entries: ReadonlyArray<ProcEntry> = [
      { pid: 1, ppid: 0, rssPages: 1 },
      { pid: 10, ppid: 1, rssPages: 2 },
      { pid: 11, ppid: 10, rssPages: 3 },
      { pid: 12, ppid: 11, rssPages: 4 },
      { pid: 13, ppid: 10, rssPages: 5 },
      { pid: 20, ppid: 1, rssPages: 6 },
      { pid: 21, ppid: 20, rssPages: 7 }
    ]
    expect(treeOf(10, entries).map((entry) => entry.pid).sort()).toEqual([10, 11, 12, 13])
    expect(treeOf(12, entries).map((entry) => entry.pid)).toEqual([12])
    expect(treeOf(99, entries)).toEqual([])
  })
})

describe("measure", () => {
  it("reports the peak RSS of the whole process tree, a child's memory included", async () => {
    const dir = makeTempDir("kern-peers-measure-")
    const release = NodePath.join(dir, "release")
    // The parent holds little; its child touches 160 MiB. Both stay until the release file appears.
    const hold = (megabytes: number) =>
      `const b = Buffer.alloc(${megabytes} * 1024 * 1024, 1); const fs = require("fs");` +
      `const t = setInterval(() => { if (fs.existsSync(${JSON.stringify(release)})) { clearInterval(t); b.length } }, 20);`
    const parent = `${hold(8)} const c = require("child_process").spawn(process.execPath, ["-e", ${JSON.stringify(hold(160))}], { stdio: "inherit" }); c.on("exit", (code) => process.exit(code ?? 1));`
    let measuredPeak = 0
    const measured = measure(
      { command: process.execPath, args: ["-e", parent], cwd: dir, env: { PATH: process.env["PATH"] ?? "" }, timeoutMs: 120_000 },
      { onSample: (peak) => (measuredPeak = peak) }
    )
    // Wait until the measurement's own sampler has seen the tree's memory (the test seeing it first, then releasing,
    // let both exit before a sample on a busy machine), then let both exit (also when it never is: nothing left running).
    const seen = await waitUntil(() => measuredPeak > 170 * mib)
    NodeFs.writeFileSync(release, "")
    const result = await measured
    expect(seen).toBe(true)
    expect(result.exitCode).toBe(0)
    expect(result.timedOut).toBe(false)
    // The parent alone (node and 8 MiB) is far below this: only its child's 160 MiB gets the tree here.
    expect(result.peakRssBytes).toBeGreaterThan(170 * mib)
    expect(result.wallMs).toBeGreaterThan(0)
    NodeFs.rmSync(dir, { recursive: true, force: true })
  })

  it("ends what the command left running once it has exited, so nothing carries into the next run", async () => {
    const dir = makeTempDir("kern-peers-leftover-")
    const script = `const c = require("child_process").spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });` +
      `c.unref(); process.stdout.write(String(c.pid) + "\\n"); process.exit(0)`
    const result = await measure({ command: process.execPath, args: ["-e", script], cwd: dir, env: {}, timeoutMs: 120_000 })
    expect(result.exitCode).toBe(0)
    const left = Number(result.stdout.trim())
    expect(left).toBeGreaterThan(0)
    expect(await waitUntil(() => !alive(left))).toBe(true)
    NodeFs.rmSync(dir, { recursive: true, force: true })
  })

  it("a command that cannot start, fails or hangs resolves with the reason, never a rejection", async () => {
    const dir = makeTempDir("kern-peers-fail-")
    const missing = await measure({ command: NodePath.join(dir, "no-such-peer"), args: [], cwd: dir, env: {}, timeoutMs: 60_000 })
    expect(missing.exitCode).toBeNull()
    expect(failureReason(missing)).toMatch(/^could not start: .*ENOENT/)
    const failing = await measure({
      command: process.execPath,
      args: ["-e", `process.stderr.write("npm error code EBADENGINE\\nnpm error notsup Required: node >=24\\nnpm error A complete log of this run can be found in: x\\n"); process.exit(1)`],
      cwd: dir,
      env: {},
      timeoutMs: 60_000
    })
    expect(failureReason(failing)).toBe("exit 1: npm error code EBADENGINE | npm error notsup Required: node >=24")
    const hanging = await measure({ command: process.execPath, args: ["-e", "setInterval(() => {}, 1000)"], cwd: dir, env: {}, timeoutMs: 500 })
    expect(hanging.timedOut).toBe(true)
    expect(failureReason(hanging)).toBe("timed out")
    NodeFs.rmSync(dir, { recursive: true, force: true })
  })
})

describe("the report", () => {
  it("shows each peer against kern, its cold run, and why a peer was not measured or a run failed", () => {
    const results: ReadonlyArray<PeerResult> = [
      {
        _tag: "Measured",
        name: "kern",
        version: "0.1.0",
        notes: ["built into the installed package"],
        installMs: 1000,
        cold: { wallMs: 4000, rssMiB: 300 },
        samples: [{ wallMs: 2000, rssMiB: 250 }, { wallMs: 3000, rssMiB: 270 }, { wallMs: 2500, rssMiB: 260 }],
        failures: []
      },
      {
        _tag: "Measured",
        name: "opencode",
        version: "1.18.33",
        notes: [],
        installMs: 1000,
        cold: undefined,
        samples: [{ wallMs: 5000, rssMiB: 520 }, { wallMs: 6000, rssMiB: 480 }],
        failures: ["cold run: exit 1: provider not found"]
      },
      { _tag: "Unavailable", name: "openclaw", reason: "npm install openclaw failed (exit 1: npm error notsup Required: node >=24)" }
    ]
    const lines = formatReport(results, "kern").split("\n")
    const row = (name: string) => lines.find((line) => line.startsWith(`${name} `))?.split(/\s+/)
    // peer, version, n, wall s, max, × kern, RSS MiB, max, × kern, cold s, cold MiB
    expect(row("kern")).toEqual(["kern", "0.1.0", "3", "2.50", "3.00", "1.00×", "260", "270", "1.00×", "4.00", "300"])
    expect(row("opencode")).toEqual(["opencode", "1.18.33", "2", "5.50", "6.00", "2.20×", "500", "520", "1.92×", "-", "-"])
    expect(lines).toContain("kern: built into the installed package")
    expect(lines).toContain("opencode: run failed (1 of 1): cold run: exit 1: provider not found")
    expect(lines).toContain("openclaw: not measured: npm install openclaw failed (exit 1: npm error notsup Required: node >=24)")
    expect(formatReport(results.slice(2), "kern").split("\n").slice(0, 3)).toEqual([
      "no peer was measured",
      "",
      "openclaw: not measured: npm install openclaw failed (exit 1: npm error notsup Required: node >=24)"
    ])
  })
})
