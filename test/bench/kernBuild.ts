// Benchmarks that run `kern` as a process run a build of their own, never the repo's dist/: a `kern` started from the
// repo while a benchmark rebuilt dist/ in place found its build missing. run.ts builds one into the bench cache
// (scripts/build.mjs --out) before the first bench that declares `usesBuild`, and tells each bench where it is.
import { createHash } from "node:crypto"
import * as NodePath from "node:path"

/** The variable run.ts sets to the folder of the bench's kern build (`<folder>/bin/kern.js`). */
export const benchKernVariable = "KERN_BENCH_BUILD"

/**
 * The folder of this checkout's bench bundles and build: inside node_modules, so their external packages resolve
 * from the project, and one per checkout, since worktrees may share one node_modules (a run in another checkout
 * bundling meanwhile would otherwise replace the code this run measures).
 */
export const benchCacheFolder = (root: string) =>
  NodePath.join(
    root,
    "node_modules",
    ".cache",
    "kern-bench",
    `${NodePath.basename(root)}-${createHash("sha256").update(NodePath.resolve(root)).digest("hex").slice(0, 8)}`
  )

/** The folder run.ts builds the bench's kern into. */
export const benchKernFolder = (root: string) => NodePath.join(benchCacheFolder(root), "kern")

/** `bin/kern.js` of the build run.ts made for this run; a bench that did not declare `usesBuild` has none. */
export const benchKernBin = (): string => {
  const folder = process.env[benchKernVariable]
  if (folder === undefined || folder === "") {
    throw new Error(`no kern build for this bench: declare \`usesBuild: true\` on it (run.ts sets ${benchKernVariable})`)
  }
  return NodePath.join(folder, "bin", "kern.js")
}
