import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

/** A fresh folder under the system temp dir (removed by the OS, not by the test: a failing test leaves evidence). */
export const makeTempDir = (prefix = "kern-test-"): string => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), prefix))

/** Writes files (path → content) below `root`, creating folders. */
export const writeFiles = (root: string, files: Readonly<Record<string, string>>): void => {
  for (const [relative, content] of Object.entries(files)) {
    const file = NodePath.join(root, relative)
    NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
    NodeFs.writeFileSync(file, content)
  }
}
