// `npm run bench [-- name…]`: runs the benchmarks of test/bench/*.bench.ts, prints a table and writes
// bench-results.json. A name selects benchmarks whose name starts with it.
//
// Each bench file is bundled first with the options of the shipped build (scripts/esbuild-options.mjs), so what is
// measured is the code as it ships, not a development transform: tsx keeps function names by wrapping every
// function it creates, which costs more per call than some of the paths measured here. Each benchmark then runs
// in a plain node process of its own (child.mjs): this runner runs under tsx, whose loader thread and source-map
// hooks a shipped kern does not have, and one bench's heap and compiled code must not carry into the next.
import { build } from "esbuild"
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { pathToFileURL } from "node:url"
import { shipped } from "../../scripts/esbuild-options.mjs"
import { type Bench, type BenchResult, summarize } from "./bench.js"

const dir = import.meta.dirname
const root = NodePath.resolve(dir, "../..")
// Inside node_modules, so the bundles' external packages resolve from the project.
const outDir = NodePath.join(root, "node_modules", ".cache", "kern-bench")
const filters = process.argv.slice(2).filter((arg) => arg !== "--")
const files = NodeFs.readdirSync(dir).filter((file) => file.endsWith(".bench.ts")).sort()

const bundle = async (file: string) => {
  const outfile = NodePath.join(outDir, file.replace(/\.ts$/, ".mjs"))
  await build({
    ...shipped,
    entryPoints: [NodePath.join(dir, file)],
    outfile,
    // A bench finds the repository from its own place, which the bundle does not share.
    define: { "import.meta.dirname": JSON.stringify(dir) }
  })
  return outfile
}

const all: Array<Bench & { readonly bundle: string }> = []
for (const file of files) {
  const bundled = await bundle(file)
  const module = (await import(pathToFileURL(bundled).href)) as { benches?: ReadonlyArray<Bench> }
  all.push(...(module.benches ?? []).map((bench) => ({ ...bench, bundle: bundled })))
}

type Samples = { readonly samples: ReadonlyArray<number>; readonly baseline: ReadonlyArray<number> }
const runInChild = (bench: (typeof all)[number]) =>
  new Promise<Samples>((resolve, reject) => {
    const out = NodePath.join(outDir, `${bench.name}.result.json`)
    NodeFs.rmSync(out, { force: true })
    const child = spawn(process.execPath, [NodePath.join(dir, "child.mjs"), bench.bundle, bench.name, out], {
      cwd: root,
      stdio: ["ignore", "inherit", "inherit"]
    })
    child.on("error", reject)
    child.on("exit", (code) =>
      code === 0
        ? resolve(JSON.parse(NodeFs.readFileSync(out, "utf8")) as Samples)
        : reject(new Error(`benchmark ${bench.name} exited with ${code}`)))
  })
const selected = filters.length === 0 ? all : all.filter((bench) => filters.some((filter) => bench.name.startsWith(filter)))
if (selected.length === 0) {
  process.stderr.write(`no benchmark matches ${filters.join(", ")}; known: ${all.map((bench) => bench.name).join(", ")}\n`)
  process.exit(2)
}

const results: Array<BenchResult> = []
for (const bench of selected) {
  process.stderr.write(`running ${bench.name}…\n`)
  const { samples, baseline } = await runInChild(bench)
  results.push(summarize(bench.name, bench.unit, samples, baseline))
}

const fmt = (value: number | undefined) => (value === undefined ? "" : Number.isInteger(value) ? String(value) : value.toPrecision(4))
const rows = [
  ["name", "unit", "median", "p95", "n", "baseline", "ratio"],
  ...results.map((r) => [r.name, r.unit, fmt(r.median), fmt(r.p95), String(r.n), fmt(r.baseline), fmt(r.ratio)])
]
const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
for (const row of rows) process.stdout.write(row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ") + "\n")

const out = NodePath.resolve(dir, "../../bench-results.json")
const previous: Array<BenchResult> = NodeFs.existsSync(out) ? JSON.parse(NodeFs.readFileSync(out, "utf8")) : []
const merged = [...previous.filter((old) => !results.some((r) => r.name === old.name)), ...results]
NodeFs.writeFileSync(out, JSON.stringify(merged, null, 2) + "\n")
process.stderr.write(`wrote ${out}\n`)
