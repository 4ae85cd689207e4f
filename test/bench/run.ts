// `npm run bench [-- name…]`: runs the benchmarks of test/bench/*.bench.ts, prints a table and writes
// bench-results.json. A name selects benchmarks whose name starts with it.
//
// Each bench file is bundled first with the options of the shipped build (scripts/esbuild-options.mjs), so what is
// measured is the code as it ships, not a development transform: tsx keeps function names by wrapping every
// function it creates, which costs more per call than some of the paths measured here. Each benchmark then runs
// in a plain node process of its own (child.mjs): this runner runs under tsx, whose loader thread and source-map
// hooks a shipped kern does not have, and one bench's heap and compiled code must not carry into the next.
import { build } from "esbuild"
import { createHash } from "node:crypto"
import { spawn, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { shipped } from "../../scripts/esbuild-options.mjs"
import { type Bench, type BenchResult, type BenchSamples, summarize } from "./bench.js"
import { benchCacheFolder, benchKernFolder, benchKernVariable } from "./kernBuild.js"

/** A benchmark as run.ts knows it: everything but its `run`, which only the child process that runs it calls. */
type BenchInfo = Omit<Bench, "run">

const dir = import.meta.dirname
const root = NodePath.resolve(dir, "../..")
const outDir = benchCacheFolder(root)
const filters = process.argv.slice(2).filter((arg) => arg !== "--")
const files = NodeFs.readdirSync(dir).filter((file) => file.endsWith(".bench.ts")).sort()

const bundle = async (file: string) => {
  const outfile = NodePath.join(outDir, file.replace(/\.ts$/, ".mjs"))
  await build({
    ...shipped,
    entryPoints: [NodePath.join(dir, file)],
    outfile,
    // A bench that bundles code of its own (session.bench.ts) calls esbuild, which runs its binary from its package.
    external: [...(shipped.external ?? []), "esbuild"],
    // A bench finds the repository from its own place, which the bundle does not share.
    define: { "import.meta.dirname": JSON.stringify(dir) }
  })
  return outfile
}

// Bundling and importing every bench file takes minutes on a busy machine. The names each file holds are kept in
// a manifest keyed by a hash of every source in this folder, so a run that names its benches bundles only the files
// holding them; any change here, or a name the manifest does not know, bundles them all again.
const manifestPath = NodePath.join(outDir, "bench-names.json")
const sourcesHash = createHash("sha256")
for (const file of NodeFs.readdirSync(dir).filter((file) => /\.(ts|mjs)$/.test(file)).sort()) {
  sourcesHash.update(file).update("\0").update(NodeFs.readFileSync(NodePath.join(dir, file))).update("\0")
}
const sourcesKey = sourcesHash.digest("hex")
const readManifest = (): Record<string, ReadonlyArray<string>> | undefined => {
  try {
    const parsed = JSON.parse(NodeFs.readFileSync(manifestPath, "utf8")) as {
      key?: unknown
      names?: Record<string, ReadonlyArray<string>>
    }
    return parsed.key === sourcesKey && typeof parsed.names === "object" && parsed.names !== null ? parsed.names : undefined
  } catch {
    return undefined
  }
}
const matches = (name: string) => filters.length === 0 || filters.some((filter) => name.startsWith(filter))
const known = readManifest()
const wanted =
  known !== undefined && filters.length > 0 && files.every((file) => Array.isArray(known[file]))
    ? files.filter((file) => known[file]!.some(matches))
    : files

/** The benchmarks of a bundle, as data, read by a plain node process (names.mjs). */
const benchesIn = (bundled: string): ReadonlyArray<BenchInfo> => {
  const read = spawnSync(process.execPath, [NodePath.join(dir, "names.mjs"), bundled], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 1 << 20,
    stdio: ["ignore", "pipe", "inherit"]
  })
  if (read.status !== 0) {
    process.stderr.write(`could not read the benchmarks of ${bundled} (exit ${read.status})\n`)
    process.exit(1)
  }
  return JSON.parse(read.stdout) as ReadonlyArray<BenchInfo>
}

const all: Array<BenchInfo & { readonly bundle: string }> = []
const names: Record<string, ReadonlyArray<string>> = {}
for (const file of wanted) {
  const bundled = await bundle(file)
  const benches = benchesIn(bundled)
  names[file] = benches.map((bench) => bench.name)
  all.push(...benches.map((bench) => ({ ...bench, bundle: bundled })))
}
if (wanted === files) NodeFs.writeFileSync(manifestPath, JSON.stringify({ key: sourcesKey, names }))

// NODE_EXTRA_CA_CERTS makes every node process read and parse a CA bundle at startup (60–80 ms here), on both sides
// of a whole-process bench: it hides kern's own start behind a larger floor and flatters the ratio. Each bench runs
// without it, so its figures are the same whatever shell it is started from.
const benchProcessEnv: NodeJS.ProcessEnv = { ...process.env }
if (benchProcessEnv["NODE_EXTRA_CA_CERTS"] !== undefined) {
  delete benchProcessEnv["NODE_EXTRA_CA_CERTS"]
  process.stderr.write("NODE_EXTRA_CA_CERTS is left out of the benches' environment\n")
}

const kernFolder = benchKernFolder(root)
const runInChild = (bench: (typeof all)[number]) =>
  new Promise<BenchSamples>((resolve, reject) => {
    const out = NodePath.join(outDir, `${bench.name}.result.json`)
    NodeFs.rmSync(out, { force: true })
    const child = spawn(process.execPath, [NodePath.join(dir, "child.mjs"), bench.bundle, bench.name, out], {
      cwd: root,
      env: bench.usesBuild === true ? { ...benchProcessEnv, [benchKernVariable]: kernFolder } : benchProcessEnv,
      stdio: ["ignore", "inherit", "inherit"]
    })
    child.on("error", reject)
    child.on("exit", (code) =>
      code === 0
        ? resolve(JSON.parse(NodeFs.readFileSync(out, "utf8")) as BenchSamples)
        : reject(new Error(`benchmark ${bench.name} exited with ${code}`)))
  })
const selected = filters.length === 0 ? all : all.filter((bench) => filters.some((filter) => bench.name.startsWith(filter)))
if (selected.length === 0) {
  process.stderr.write(`no benchmark matches ${filters.join(", ")}; known: ${all.map((bench) => bench.name).join(", ")}\n`)
  process.exit(2)
}

// One build for every bench that runs kern as a process, into a folder of its own (kernBuild.ts).
if (selected.some((bench) => bench.usesBuild === true)) {
  process.stderr.write(`building kern into ${kernFolder}…\n`)
  const built = spawnSync(process.execPath, [NodePath.join(root, "scripts", "build.mjs"), "--out", kernFolder], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"]
  })
  if (built.status !== 0) {
    process.stderr.write(`the bench build failed (exit ${built.status})\n`)
    process.exit(1)
  }
}

const results: Array<BenchResult> = []
for (const bench of selected) {
  process.stderr.write(`running ${bench.name}…\n`)
  results.push(summarize(bench, await runInChild(bench)))
}

const fmt = (value: number | undefined) => (value === undefined ? "" : Number.isInteger(value) ? String(value) : value.toPrecision(4))
const rows = [
  ["name", "unit", "median", "p95", "n", "baseline", "ratio"],
  ...results.map((r) => [r.name, r.unit, fmt(r.median), fmt(r.p95), String(r.n), fmt(r.baseline), fmt(r.ratio)])
]
const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
for (const row of rows) process.stdout.write(row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ") + "\n")

// The figures measured beside the samples, and each target with its verdict.
for (const result of results) {
  const extras = Object.entries(result.extra ?? {}).map(([name, value]) => `${name} ${fmt(value)}`)
  if (extras.length > 0) process.stdout.write(`${result.name}: ${extras.join(", ")}\n`)
}
const verdicts = results.flatMap((result) =>
  (result.verdicts ?? []).map((verdict) => ({ name: result.name, ...verdict }))
)
if (verdicts.length > 0) {
  process.stdout.write("\ntargets\n")
  for (const verdict of verdicts) {
    process.stdout.write(`${verdict.met ? "met   " : "MISSED"}  ${verdict.name}: ${verdict.target} (measured ${fmt(verdict.value)})\n`)
  }
  const missed = verdicts.filter((verdict) => !verdict.met).length
  process.stdout.write(`${verdicts.length - missed} of ${verdicts.length} targets met\n`)
}

const out = NodePath.resolve(dir, "../../bench-results.json")
const previous: Array<BenchResult> = NodeFs.existsSync(out) ? JSON.parse(NodeFs.readFileSync(out, "utf8")) : []
const merged = [...previous.filter((old) => !results.some((r) => r.name === old.name)), ...results]
NodeFs.writeFileSync(out, JSON.stringify(merged, null, 2) + "\n")
process.stderr.write(`wrote ${out}\n`)
