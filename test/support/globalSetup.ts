import { execFileSync } from "node:child_process"

// CLI tests run the real binary: build it once from the current sources before any test file runs.
export default function setup(): void {
  execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" })
}
