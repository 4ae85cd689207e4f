import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

/** The folders of the memory (MemoryCommits' pathspecs), walked whole; `*.md` at the root beside them. */
const memoryFolders = ["knowledge", "notes", "skills"]

/** Past this many entries the fingerprint is not made: git is asked every time, as without one. */
export const maxFingerprintEntries = 5_000

/** Files of the repository and of the user's git setup that change what `git status` says. */
const gitFiles = ["HEAD", "index", "config", "packed-refs", "info/exclude", "info/attributes"]
const userGitFiles = [".gitconfig", ".config/git/config", ".config/git/ignore", ".config/git/attributes"]

export interface MemoryFingerprint {
  /** Each path with its inode, size, mode and times: equal texts, nothing git looks at changed (but see newestMs). */
  readonly text: string
  /** The newest modification or change time seen (ms): a file changed again within the file system's tick keeps its times. */
  readonly newestMs: number
}

/**
 * What `git status` over the memory depends on, read with lstat (no file is opened but `.git/HEAD`): the memory files
 * and folders, the repository's HEAD, the ref it names, its index, config, packed refs and excludes, the folder's
 * `.gitignore` and `.gitattributes`, and the user's and the system's git config. Undefined when it cannot be made
 * cheaply and surely (`.git` a file: a worktree or submodule whose state lives elsewhere; too many entries): then git
 * is asked.
 */
export const memoryFingerprint = (dir: string, home: string = NodeOs.homedir()): MemoryFingerprint | undefined => {
  const parts: Array<string> = []
  let newestMs = 0
  const add = (path: string): NodeFs.Stats | undefined => {
    const stat = NodeFs.lstatSync(path, { throwIfNoEntry: false })
    if (stat === undefined) {
      parts.push(`${path}\u0000-`)
      return undefined
    }
    newestMs = Math.max(newestMs, stat.mtimeMs, stat.ctimeMs)
    parts.push(`${path}\u0000${stat.ino}:${stat.size}:${stat.mode}:${stat.mtimeMs}:${stat.ctimeMs}`)
    return stat
  }
  const list = (folder: string): ReadonlyArray<NodeFs.Dirent> => {
    try {
      return NodeFs.readdirSync(folder, { withFileTypes: true })
    } catch {
      return []
    }
  }
  try {
    const git = NodePath.join(dir, ".git")
    // Whether there is one, not its times: every `git status` makes and removes its lock in it.
    const gitStat = NodeFs.lstatSync(git, { throwIfNoEntry: false })
    if (gitStat !== undefined && !gitStat.isDirectory()) return undefined
    parts.push(`${git}\u0000${gitStat === undefined ? "-" : `${gitStat.ino}`}`)
    if (gitStat !== undefined) {
      for (const name of gitFiles) add(NodePath.join(git, name))
      const head = NodeFs.readFileSync(NodePath.join(git, "HEAD"), "utf8")
      parts.push(`HEAD\u0000${head}`)
      const ref = /^ref: (refs\/[^\n]+)\n?$/.exec(head)?.[1]
      if (ref !== undefined) add(NodePath.join(git, ref))
    }
    for (const name of [".gitignore", ".gitattributes"]) add(NodePath.join(dir, name))
    for (const name of userGitFiles) add(NodePath.join(home, name))
    add("/etc/gitconfig")
    // The folder itself: an entry made, removed or renamed changes its times.
    add(dir)
    for (const entry of list(dir)) if (entry.name.endsWith(".md")) add(NodePath.join(dir, entry.name))
    const queue = memoryFolders.map((name) => NodePath.join(dir, name))
    while (queue.length > 0) {
      const folder = queue.shift() ?? ""
      if (add(folder)?.isDirectory() !== true) continue
      for (const entry of list(folder)) {
        const path = NodePath.join(folder, entry.name)
        if (entry.isDirectory()) queue.push(path)
        else add(path)
        if (parts.length > maxFingerprintEntries) return undefined
      }
    }
  } catch {
    return undefined
  }
  return { text: parts.join("\n"), newestMs }
}
