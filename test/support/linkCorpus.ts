import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { makeTempDir } from "./tempDir.js"

/**
 * Attacks on the door to the agent's files (src/storage/agentFiles.ts): links into `.kern/` and out of the folder,
 * FIFOs, devices and an oversized file, planted where kern's readers look. Every secret is a marker a test can
 * search for in whatever a reader produced (kern.db, a prompt, a model request, git history, a tool's output).
 */
export const envSecret = "sk-or-CORPUS-ENV-SECRET-7f3a"
export const outsideSecret = "CORPUS-OUTSIDE-SSH-KEY-91c2"
export const bigMarker = "CORPUS-OVERSIZED-55d1"
export const markers = [envSecret, outsideSecret, bigMarker] as const

/** What must never come out of a reader. */
export const leaked = (text: string): ReadonlyArray<string> => markers.filter((marker) => text.includes(marker))

/** A file outside the agent folder (an SSH key), and a folder outside holding a Markdown file. */
export const makeOutside = () => {
  const outside = makeTempDir("kern-outside-")
  NodeFs.writeFileSync(NodePath.join(outside, "id_ed25519"), `-----BEGIN KEY-----\n${outsideSecret}\n`)
  NodeFs.writeFileSync(NodePath.join(outside, "key.md"), `# key\n${outsideSecret}\n`)
  return outside
}

/** Puts the secrets into an agent folder's `.kern/`: `.env` and a Markdown file a symlinked folder could expose. */
export const plantSecrets = (dir: string) => {
  NodeFs.mkdirSync(NodePath.join(dir, ".kern"), { recursive: true })
  NodeFs.writeFileSync(
    NodePath.join(dir, ".kern", ".env"),
    `OPENROUTER_API_KEY=${envSecret}\nTELEGRAM_BOT_TOKEN=${envSecret}-bot\nKERN_AUTH_TOKEN=${envSecret}-auth\n`,
    { mode: 0o600 }
  )
  NodeFs.writeFileSync(NodePath.join(dir, ".kern", "memo.md"), `# memo\n${envSecret}\n`)
}

export interface Attack {
  readonly name: string
  /** Whether it is a file (a folder link otherwise: only readers that walk folders meet it). */
  readonly file: boolean
  /** Plants the attack at `target` (absolute) in agent folder `dir`; false when this machine cannot make it. */
  readonly plant: (dir: string, outside: string, target: string) => boolean
}

const symlinkTo = (to: (dir: string, outside: string, target: string) => string) =>
(dir: string, outside: string, target: string) => {
  NodeFs.mkdirSync(NodePath.dirname(target), { recursive: true })
  NodeFs.symlinkSync(to(dir, outside, target), target)
  return true
}

const hardLinkTo = (to: (dir: string, outside: string) => string) => (dir: string, outside: string, target: string) => {
  NodeFs.mkdirSync(NodePath.dirname(target), { recursive: true })
  NodeFs.linkSync(to(dir, outside), target)
  return true
}

const env = (dir: string) => NodePath.join(dir, ".kern", ".env")
const key = (outside: string) => NodePath.join(outside, "id_ed25519")

export const attacks: ReadonlyArray<Attack> = [
  { name: "absolute symlink to .kern/.env", file: true, plant: symlinkTo((dir) => env(dir)) },
  { name: "relative symlink to .kern/.env", file: true, plant: symlinkTo((dir, _, target) => NodePath.relative(NodePath.dirname(target), env(dir))) },
  {
    name: "symlink chain to .kern/.env",
    file: true,
    plant: (dir, _outside, target) => {
      NodeFs.mkdirSync(NodePath.dirname(target), { recursive: true })
      NodeFs.symlinkSync(NodePath.relative(NodePath.dirname(target), env(dir)), `${target}.hop2`)
      NodeFs.symlinkSync(NodePath.basename(`${target}.hop2`), `${target}.hop1`)
      NodeFs.symlinkSync(NodePath.basename(`${target}.hop1`), target)
      return true
    }
  },
  { name: "absolute symlink to a key outside", file: true, plant: symlinkTo((_, outside) => key(outside)) },
  { name: "relative symlink to a key outside", file: true, plant: symlinkTo((_, outside, target) => NodePath.relative(NodePath.dirname(target), key(outside))) },
  { name: "symlinked folder into .kern/", file: false, plant: symlinkTo((dir) => NodePath.join(dir, ".kern")) },
  { name: "symlinked folder outside", file: false, plant: symlinkTo((_, outside) => outside) },
  { name: "hard link to .kern/.env", file: true, plant: hardLinkTo((dir) => env(dir)) },
  { name: "hard link to a key outside", file: true, plant: hardLinkTo((_, outside) => key(outside)) },
  {
    name: "FIFO",
    file: true,
    plant: (_dir, _outside, target) => {
      NodeFs.mkdirSync(NodePath.dirname(target), { recursive: true })
      NodeChildProcess.execFileSync("mkfifo", [target])
      return true
    }
  },
  { name: "symlink to /dev/zero", file: true, plant: symlinkTo(() => "/dev/zero") },
  { name: "symlink to /dev/urandom", file: true, plant: symlinkTo(() => "/dev/urandom") },
  {
    name: "character device node",
    file: true,
    plant: (_dir, _outside, target) => {
      NodeFs.mkdirSync(NodePath.dirname(target), { recursive: true })
      try {
        NodeChildProcess.execFileSync("mknod", [target, "c", "1", "5"], { stdio: "ignore" })
        return true
      } catch {
        return false
      }
    }
  },
  {
    name: "oversized file",
    file: true,
    plant: (_dir, _outside, target) => {
      NodeFs.mkdirSync(NodePath.dirname(target), { recursive: true })
      NodeFs.writeFileSync(target, `# big\n${bigMarker}\n`)
      NodeFs.truncateSync(target, 4 * 1024 * 1024 + 64)
      return true
    }
  }
]

export const fileAttacks = attacks.filter((attack) => attack.file)

/** A file name for an attack: `prefix` + a slug + `.md`. */
export const slug = (attack: Attack) => attack.name.replace(/[^a-z0-9]+/gi, "-").toLowerCase()

/**
 * Every attack planted under `folder` (notes/, knowledge/) of `dir` as `<slug>.md` (folders as `<slug>`). Returns the
 * relative paths planted.
 */
export const plantAll = (dir: string, outside: string, folder: string): ReadonlyArray<string> =>
  attacks.flatMap((attack) => {
    const relative = NodePath.join(folder, attack.file ? `${slug(attack)}.md` : slug(attack))
    return attack.plant(dir, outside, NodePath.join(dir, relative)) ? [relative] : []
  })

/**
 * Opens every FIFO below `dir` for writing and closes it: a reader blocked on one (today's code) gets end of file,
 * so a test that failed does not leave the process hanging.
 */
export const releaseFifos = (dir: string) => {
  const walk = (folder: string): void => {
    for (const entry of NodeFs.readdirSync(folder, { withFileTypes: true })) {
      const path = NodePath.join(folder, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.isFIFO()) {
        try {
          NodeFs.closeSync(NodeFs.openSync(path, NodeFs.constants.O_WRONLY | NodeFs.constants.O_NONBLOCK))
        } catch {
          // No reader waiting: nothing to release.
        }
      }
    }
  }
  walk(dir)
}
