import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { agentPaths } from "../../src/config/paths.js"
import { run, servingFiles } from "../../src/quick/chatProbe.js"
import { markFile } from "../../src/storage/HostedMark.js"
import { makeTempDir } from "../support/tempDir.js"

// bin/kern.js starts a chat on its turn's bundle only when none of the files a running agent is found by is there
// (src/channels/web/running.ts locate: the lock's holder, agent.pid, a host's mark). Any of them there, even stale or
// unreadable, sends the chat to the client, which looks for the agent as before.

const agentFolder = () => {
  const dir = NodePath.join(makeTempDir(), "agent")
  NodeFs.mkdirSync(NodePath.join(dir, ".kern"), { recursive: true })
  return dir
}

describe("the chat probe", () => {
  it("names the files the running agent is found by", () => {
    const dir = agentFolder()
    const paths = agentPaths(dir)
    expect(servingFiles(dir)).toEqual([paths.lockFile, paths.pidFile, markFile(paths.kernDir)])
  })

  it("starts on the turn only when none of them is there; any one there, or a folder it cannot look in, goes to the client", () => {
    const dir = agentFolder()
    expect(run(["chat", "-m", "hi", "--dir", dir])).toBe("local")
    expect(run(["chat", dir, "-m", "hi", "--json"])).toBe("local")
    for (const file of servingFiles(dir)) {
      NodeFs.writeFileSync(file, "")
      expect(run(["chat", "-m", "hi", "--dir", dir]), file).toBe("client")
      NodeFs.rmSync(file)
    }
    // A symlink to nowhere is there all the same.
    NodeFs.symlinkSync(NodePath.join(dir, "nowhere"), servingFiles(dir)[0]!)
    expect(run(["chat", "-m", "hi", "--dir", dir])).toBe("client")
    NodeFs.rmSync(servingFiles(dir)[0]!)
    // A .kern/ that cannot be searched: the probe cannot tell, so the client decides.
    if (process.getuid?.() !== 0) {
      NodeFs.chmodSync(NodePath.join(dir, ".kern"), 0o000)
      expect(run(["chat", "-m", "hi", "--dir", dir])).toBe("client")
      NodeFs.chmodSync(NodePath.join(dir, ".kern"), 0o700)
    }
  })

  it("leaves to the client what the quick paths do not take: another command, files, an empty message, two folders", () => {
    const dir = agentFolder()
    for (const argv of [
      ["status", dir],
      ["chat", "--file", "a.png", "--dir", dir],
      ["chat", "-m", "  ", "--dir", dir],
      ["chat", "a", "--dir", "b", "-m", "hi"],
      ["chat", "-m", "hi", "--wizard"]
    ]) expect(run(argv), argv.join(" ")).toBe("client")
  })
})
