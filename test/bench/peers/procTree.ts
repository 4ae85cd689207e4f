// The resident memory of a process and every process below it, read from /proc (Linux): a peer's peak RSS is that of
// its whole tree (a CLI that starts a server, a language server or a shell is charged for them), not of its first pid.
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"

/** One line of the process table: who it is, its parent, its resident pages. */
export interface ProcEntry {
  readonly pid: number
  readonly ppid: number
  readonly rssPages: number
}

const isCount = (n: number) => Number.isInteger(n) && n >= 0

/**
 * Reads `/proc/<pid>/stat`. The command name (field 2) is in parentheses and may hold spaces and parentheses
 * itself, so the fields are counted from the LAST `)`: state is field 3, ppid field 4, rss (pages) field 24.
 */
export const parseStat = (text: string): ProcEntry | undefined => {
  const open = text.indexOf("(")
  const close = text.lastIndexOf(")")
  if (open < 0 || close < open) return undefined
  const pid = Number(text.slice(0, open).trim())
  const fields = text.slice(close + 1).trim().split(/\s+/)
  const ppid = Number(fields[1])
  const rssPages = Number(fields[21])
  return isCount(pid) && pid > 0 && isCount(ppid) && isCount(rssPages) ? { pid, ppid, rssPages } : undefined
}

/** The entries of `root` and of every process below it (by parent pid), `root` first. */
export const treeOf = (root: number, entries: ReadonlyArray<ProcEntry>): ReadonlyArray<ProcEntry> => {
  const children = new Map<number, Array<ProcEntry>>()
  for (const entry of entries) children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), entry])
  const top = entries.find((entry) => entry.pid === root)
  if (top === undefined) return []
  const tree: Array<ProcEntry> = [top]
  const seen = new Set([root])
  for (let index = 0; index < tree.length; index++) {
    for (const child of children.get(tree[index]!.pid) ?? []) {
      if (!seen.has(child.pid)) {
        seen.add(child.pid)
        tree.push(child)
      }
    }
  }
  return tree
}

/** Every process's entry now; one that exits while it is read is left out. */
export const readProcesses = (): ReadonlyArray<ProcEntry> =>
  NodeFs.readdirSync("/proc").flatMap((name) => {
    if (!/^\d+$/.test(name)) return []
    try {
      const entry = parseStat(NodeFs.readFileSync(`/proc/${name}/stat`, "utf8"))
      return entry === undefined ? [] : [entry]
    } catch {
      // The process ended between the listing and the read.
      return []
    }
  })

/** The kernel's page size in bytes (`getconf PAGESIZE`; 4096 where getconf is missing). */
export const pageSize = (): number => {
  const result = spawnSync("getconf", ["PAGESIZE"], { encoding: "utf8" })
  const size = Number(result.stdout?.trim())
  return result.status === 0 && isCount(size) && size > 0 ? size : 4096
}

/** Resident bytes of `root` and its descendants now (0 once it is gone). */
export const treeRssBytes = (root: number, bytesPerPage: number): number =>
  treeOf(root, readProcesses()).reduce((sum, entry) => sum + entry.rssPages * bytesPerPage, 0)
