import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"

// CLI tests run the real binary: build it once from the current sources before any test file runs. The declaration
// files (slow to make, read only by the package test) are made when missing.
export default function setup(): void {
  const args = NodeFs.existsSync("dist/types/index.d.ts") ? [] : ["--types"]
  execFileSync(process.execPath, ["scripts/build.mjs", ...args], { stdio: "inherit" })
}
