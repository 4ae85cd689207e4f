import * as NodeFs from "node:fs"

/**
 * The process that runs turns and tools holds no secret in its environment. A tool can read any ancestor's initial
 * environment through `/proc/<pid>/environ` (bash did: `cat /proc/$PPID/environ` gave the operator's AWS and GitHub
 * tokens), so a minimal environment for the children is not enough: kern's own must be minimal too. At start, a
 * command that runs tools copies what it inherited into memory (ProcessEnv: provider keys, KERN_AUTH_TOKEN, channel
 * tokens and `bashEnv` names keep working from there), removes every other variable from its environment, and blanks
 * them in the initial environment block the kernel shows in `/proc/self/environ`. Node 20 cannot exec, so the block
 * is overwritten in place through `/proc/self/mem` (as setproctitle does with argv): no second process, no cost.
 */

/** What a process needs to behave, none of it a secret: the shell's basics, the locale, terminal and git identity. */
const keptNames: ReadonlySet<string> = new Set([
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "TERM",
  "TZ",
  "TMPDIR",
  "COLORTERM",
  "NO_COLOR",
  "FORCE_COLOR",
  "NODE_OPTIONS",
  "GIT_AUTHOR_NAME",
  "GIT_AUTHOR_EMAIL",
  "GIT_COMMITTER_NAME",
  "GIT_COMMITTER_EMAIL"
])
const keptPrefixes: ReadonlyArray<string> = ["LC_", "XDG_"]

export const keepsVariable = (name: string): boolean =>
  keptNames.has(name) || keptPrefixes.some((prefix) => name.startsWith(prefix))

/** The commands that run turns or tools; the others (help, status, logs, …) keep their environment. */
export const runsTools = (commandPath: string): boolean =>
  ["run", "chat", "tui", "serve", "kernel", "mcp"].includes(commandPath.split(" ")[0] ?? "")

/** `env_start` and `env_end` of /proc/self/stat (fields 50 and 51), counted after the command name's `)`. */
const environmentBlock = (): { readonly start: number; readonly end: number } | undefined => {
  const stat = NodeFs.readFileSync("/proc/self/stat", "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const start = Number(fields[47])
  const end = Number(fields[48])
  return Number.isSafeInteger(start) && Number.isSafeInteger(end) && end > start ? { start, end } : undefined
}

/** Zeroes, in the initial environment block, every `NAME=value` whose name is not kept. */
const blankInitialEnvironment = (): boolean => {
  const block = environmentBlock()
  if (block === undefined) return false
  const fd = NodeFs.openSync("/proc/self/mem", "r+")
  try {
    const bytes = Buffer.alloc(block.end - block.start)
    NodeFs.readSync(fd, bytes, 0, bytes.length, block.start)
    let changed = false
    for (let from = 0; from < bytes.length;) {
      const nul = bytes.indexOf(0, from)
      const to = nul < 0 ? bytes.length : nul
      const entry = bytes.toString("latin1", from, to)
      const eq = entry.indexOf("=")
      if (to > from && (eq <= 0 || !keepsVariable(entry.slice(0, eq)))) {
        bytes.fill(0, from, to)
        changed = true
      }
      from = to + 1
    }
    if (changed) NodeFs.writeSync(fd, bytes, 0, bytes.length, block.start)
    return true
  } finally {
    NodeFs.closeSync(fd)
  }
}

/**
 * Reduces this process's environment to the kept names and returns all it inherited, for ProcessEnv. Where
 * `/proc/self/mem` cannot be written (not Linux, a hardened kernel) the variables are still removed from the
 * environment children inherit; `blanked` says whether `/proc/self/environ` was cleaned too.
 */
export const reduceEnvironment = (
  env: NodeJS.ProcessEnv
): { readonly inherited: Readonly<Record<string, string>>; readonly blanked: boolean } => {
  const inherited: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) if (value !== undefined) inherited[name] = value
  // Unset first: nothing may read a variable whose bytes are about to be zeroed.
  for (const name of Object.keys(inherited)) if (!keepsVariable(name)) delete env[name]
  let blanked = false
  try {
    blanked = blankInitialEnvironment()
  } catch {
    blanked = false
  }
  return { inherited, blanked }
}
