// What a build of kern reads, and a fingerprint of it: a change in any of it (path, size or mtime) means the build is
// made again. Used by `scripts/build.mjs --if-changed` (npm's prepare: `npm link` and `npx` run it again in the same
// checkout) and by the tests' build (test/support/globalSetup.ts).
import { createHash } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/** The folders and files under the checkout a build reads. */
export const buildInputs = ["src", "scripts", "bin", "package.json", "package-lock.json", "tsconfig.json"]

/** A hash of every input's path, size and mtime under `root` (a missing input counts as missing). */
export const fingerprint = (root, extra = "") => {
  const hash = createHash("sha256")
  hash.update(`${extra}\n`)
  const visit = (path) => {
    const stat = NodeFs.statSync(NodePath.join(root, path), { throwIfNoEntry: false })
    if (stat === undefined) {
      hash.update(`${path}\0missing\n`)
    } else if (stat.isDirectory()) {
      for (const name of NodeFs.readdirSync(NodePath.join(root, path)).sort()) visit(NodePath.join(path, name))
    } else {
      hash.update(`${path}\0${stat.size}\0${stat.mtimeMs}\n`)
    }
  }
  for (const input of buildInputs) visit(input)
  return hash.digest("hex")
}
