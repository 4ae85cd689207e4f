import * as NodePath from "node:path"

/** A hosted agent's name: its host.json key, or its folder's base name; it is the `/agents/<name>` of its routes. */
export const agentNamePattern = /^[a-z0-9][a-z0-9-]{0,62}$/

/**
 * A `kern serve` host's own files, in `.kern-host/` of its home (host.json's folder, or `--home`): its token in `.env`
 * (KERN_HOST_TOKEN, mode 0600), `host.lock`, held while it runs with the address it serves on, and its log
 * (`logs/kern.log`, JSON lines, each hosted agent's annotated with its name). Here, below the host, because a client
 * that reaches a hosted agent (src/channels/web/running.ts) finds the host by them.
 */
export interface HostFiles {
  readonly home: string
  readonly dir: string
  readonly envFile: string
  readonly lockFile: string
  readonly logFile: string
}

export const hostFiles = (home: string): HostFiles => {
  const root = NodePath.resolve(home)
  const dir = NodePath.join(root, ".kern-host")
  return {
    home: root,
    dir,
    envFile: NodePath.join(dir, ".env"),
    lockFile: NodePath.join(dir, "host.lock"),
    logFile: NodePath.join(dir, "logs", "kern.log")
  }
}
