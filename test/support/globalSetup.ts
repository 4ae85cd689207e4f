import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { fingerprint } from "../../scripts/buildInputs.mjs"
import { testBuild } from "./build.js"

// CLI tests run the real binary: a kern of their own, built once before any test file runs, into test-output/kern
// (scripts/build.mjs --out), and only when the sources changed since the last build. The repo's dist/ is never touched.
// The package test reads the repo's build (what package.json's main, types and exports name), which `npm install` makes;
// it is made here only when some of it is missing (a checkout that was never installed), so never under a running kern.
/** The files package.json says the package is: its main, its types and what it exports. */
const packageFiles = (): ReadonlyArray<string> => {
  const pkg = JSON.parse(NodeFs.readFileSync("package.json", "utf8"))
  const exported = Object.values(pkg.exports as Record<string, string | Record<string, string>>)
  return [pkg.main, pkg.types, ...exported.flatMap((entry) => typeof entry === "string" ? [entry] : Object.values(entry))]
}

export default function setup(): void {
  if (!packageFiles().every((file) => NodeFs.existsSync(file))) {
    execFileSync(process.execPath, ["scripts/build.mjs", "--types"], { stdio: "inherit" })
  }
  const stamp = NodePath.join(testBuild, "inputs.sha256")
  const current = fingerprint(".")
  if (NodeFs.existsSync(stamp) && NodeFs.readFileSync(stamp, "utf8") === current) return
  NodeFs.rmSync(stamp, { force: true })
  NodeFs.rmSync(NodePath.join(testBuild, "init-cache"), { recursive: true, force: true })
  execFileSync(process.execPath, ["scripts/build.mjs", "--out", testBuild], { stdio: "inherit" })
  NodeFs.writeFileSync(stamp, current)
}
