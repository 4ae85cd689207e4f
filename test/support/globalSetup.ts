import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { testBuild } from "./build.js"

/** What the build reads: a change in any of it (path, size or mtime) means the test build is built again. */
const inputs = ["src", "scripts", "bin", "package.json"]

const fingerprint = (): string => {
  const hash = createHash("sha256")
  const visit = (path: string): void => {
    const stat = NodeFs.statSync(path)
    if (stat.isDirectory()) {
      for (const name of NodeFs.readdirSync(path).sort()) visit(NodePath.join(path, name))
    } else {
      hash.update(`${path}\0${stat.size}\0${stat.mtimeMs}\n`)
    }
  }
  for (const input of inputs) visit(input)
  return hash.digest("hex")
}

// CLI tests run the real binary: a kern of their own, built once before any test file runs, into test-output/kern
// (scripts/build.mjs --out), and only when the sources changed since the last build. The repo's dist/ is never touched.
// The package test reads the repo's declaration files, which `npm install` makes; they are made here only when missing.
export default function setup(): void {
  if (!NodeFs.existsSync("dist/types/index.d.ts")) {
    execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], { stdio: "inherit" })
  }
  const stamp = NodePath.join(testBuild, "inputs.sha256")
  const current = fingerprint()
  if (NodeFs.existsSync(stamp) && NodeFs.readFileSync(stamp, "utf8") === current) return
  NodeFs.rmSync(stamp, { force: true })
  NodeFs.rmSync(NodePath.join(testBuild, "init-cache"), { recursive: true, force: true })
  execFileSync(process.execPath, ["scripts/build.mjs", "--out", testBuild], { stdio: "inherit" })
  NodeFs.writeFileSync(stamp, current)
}
