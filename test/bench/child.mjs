// Runs one benchmark of a bundled bench file in this process and writes its samples to a file:
// `node test/bench/child.mjs <bundle.mjs> <bench name> <result.json>`. run.ts starts it with plain node, so the
// code measured runs as it ships: no tsx loader thread, no source-map hooks, nothing left from another bench.
import * as NodeFs from "node:fs"
import { pathToFileURL } from "node:url"

const [bundle, name, out] = process.argv.slice(2)
const { benches = [] } = await import(pathToFileURL(bundle).href)
const bench = benches.find((candidate) => candidate.name === name)
if (bench === undefined) {
  process.stderr.write(`no benchmark ${name} in ${bundle}\n`)
  process.exit(2)
}
const { samples, baseline, extra } = await bench.run()
NodeFs.writeFileSync(out, JSON.stringify({ samples, baseline: baseline ?? [], extra: extra ?? {} }))
// A bench may leave a handle open (a server's keep-alive socket); its samples are written.
process.exit(0)
