import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { testDist } from "./build.js"
import { kernBin } from "./cli.js"

const root = NodePath.resolve(import.meta.dirname, "../..")

/**
 * bin/kern.js (with its loader, bin/codeCache.js) and the named files of the test build's dist/ alone, in a folder
 * under node_modules so the packages they require still resolve: what kern does when the rest of its build is not
 * there, and a code cache no other test's kern touches.
 */
export const partialBuild = (prefix: string, distFiles: ReadonlyArray<string>) => {
  const cache = NodePath.join(root, "node_modules/.cache")
  NodeFs.mkdirSync(cache, { recursive: true })
  const copy = NodeFs.mkdtempSync(NodePath.join(cache, prefix))
  NodeFs.mkdirSync(NodePath.join(copy, "bin"))
  NodeFs.mkdirSync(NodePath.join(copy, "dist"))
  for (const file of ["kern.js", "codeCache.js"]) {
    NodeFs.copyFileSync(NodePath.join(NodePath.dirname(kernBin), file), NodePath.join(copy, "bin", file))
  }
  for (const file of distFiles) NodeFs.copyFileSync(NodePath.join(testDist, file), NodePath.join(copy, "dist", file))
  return {
    bin: NodePath.join(copy, "bin/kern.js"),
    dist: NodePath.join(copy, "dist"),
    remove: () => NodeFs.rmSync(copy, { recursive: true, force: true })
  }
}
