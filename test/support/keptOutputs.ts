// What the tests of the kept outputs (test/quick/statusCache.test.ts, sessionsCache.test.ts) share: a preload that
// tells whether the command's own bundle ran, and the agent folder's files settled as the clock settles them.
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { fineSettleMs } from "../../src/quick/statusSettle.js"
import { bundleReadHooks } from "./bundleReads.js"
import { makeTempDir } from "./tempDir.js"

/** A preload that says, at exit, whether a file whose name ends with `bundle` (the command's own bundle) was read. */
export const bundleMarker = (bundle: string): string => {
  const file = NodePath.join(makeTempDir(), "bundles.cjs")
  NodeFs.writeFileSync(
    file,
    `const NodeFs = require("node:fs")
let full = false
// Opened to be read (bin/codeCache.js), or read whole.
const bundleRead = (file) => { if (String(file).endsWith(${JSON.stringify(bundle)})) full = true }
${bundleReadHooks}process.on("exit", () => process.stderr.write(full ? "\\n@full\\n" : "\\n@kept\\n"))
`
  )
  return file
}

/** A run's output without the marker, and whether the bundle ran. */
export const markedRun = (result: { readonly status: number | null; readonly stdout: string; readonly stderr: string }) => {
  const marker = result.stderr.lastIndexOf("\n@")
  if (marker === -1) throw new Error(`no marker: ${result.stderr}`)
  return {
    seen: { status: result.status, stdout: result.stdout, stderr: result.stderr.slice(0, marker) },
    full: result.stderr.slice(marker).includes("@full")
  }
}

/** Every file and folder below the agent folder's .kern. */
export const kernFiles = (dir: string): Array<string> => {
  const files: Array<string> = []
  const walk = (path: string) => {
    files.push(path)
    if (NodeFs.statSync(path).isDirectory()) for (const name of NodeFs.readdirSync(path)) walk(NodePath.join(path, name))
  }
  walk(NodePath.join(dir, ".kern"))
  return files
}

/**
 * Settled as the clock settles it, the files keeping the stamps their changes gave them: waits until the newest of
 * them is older than the short rule's 100 ms (src/quick/statusSettle.ts), as a user's next ask may come.
 */
export const settleByClock = async (dir: string) => {
  const newestMs = Math.max(...kernFiles(dir).map((file) => Number(NodeFs.statSync(file, { bigint: true }).mtimeNs / 1_000_000n)))
  while (Date.now() <= newestMs + fineSettleMs + 1) await new Promise((resolve) => setTimeout(resolve, 5))
}

/** Whether the temporary folders' file system keeps fine stamps of this kernel's clock (ext4, tmpfs, xfs, btrfs). */
export const fineStampsHere = (() => {
  if (process.platform !== "linux") return false
  const type = NodeFs.statfsSync(makeTempDir()).type
  return [0xef53, 0x01021994, 0x58465342, 0x9123683e].includes(type)
})()
