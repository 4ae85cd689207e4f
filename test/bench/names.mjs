// Prints the benchmarks a bundled bench file holds, as data (every field but `run`):
// `node test/bench/names.mjs <bundle.mjs>`. run.ts starts it with plain node for each bundle it has not read the names
// of before: imported into run.ts itself, under tsx (whose loader reads each bundle's ~25 MB source map), twenty
// bundles took the runner past its 4 GB heap.
import { pathToFileURL } from "node:url"

const [bundle] = process.argv.slice(2)
const { benches = [] } = await import(pathToFileURL(bundle).href)
process.stdout.write(JSON.stringify(benches.map(({ run: _run, ...info }) => info)))
// A bench file may open a handle as it loads; its names are written.
process.exit(0)
