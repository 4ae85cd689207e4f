// Which bundle starts `kern chat -m TEXT` (bin/kern.js asks before loading either): when the folder holds none of the
// files by which a running agent is found (its lock, `kern start`'s agent.pid, a `kern serve` host's mark), no agent
// can serve it and the turn runs here (dist/quickChatLocal.cjs) without loading the client first (dist/quickChat.cjs,
// its config read and its schemas: ~0.3 s of CPU). Only a shortcut: the turn's bundle looks for a running agent again,
// as the full CLI does, and talks to one it finds. Plain code, no Effect: dist/quickChatProbe.cjs is a few KB.
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { agentPaths } from "../config/paths.js"
import { parseChatArgs } from "./chatArgs.js"

/** `.kern/hosted.json` (src/storage/HostedMark.ts markFile), named here to keep that module's schemas out. */
export const hostedMarkName = "hosted.json"

/** The files that say an agent may run the folder: any of them there (or unreadable) means one may. */
export const servingFiles = (dir: string): ReadonlyArray<string> => {
  const paths = agentPaths(dir)
  return [paths.lockFile, paths.pidFile, NodePath.join(paths.kernDir, hostedMarkName)]
}

const absent = (file: string): boolean => {
  try {
    NodeFs.lstatSync(file)
    return false
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT"
  }
}

/**
 * "local" when `kern <argv>` is a chat the turn's bundle takes and no agent can serve its folder; "client" for any
 * other chat (the client looks for the agent, then hands over to the turn's bundle or the full CLI).
 */
export const run = (argv: ReadonlyArray<string>): "local" | "client" => {
  const args = argv[0] === "chat" ? parseChatArgs(argv.slice(1)) : undefined
  if (args === undefined || args.message.trim() === "") return "client"
  return servingFiles(args.dir).every(absent) ? "local" : "client"
}
