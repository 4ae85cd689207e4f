import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { git, importAgent, importFixture, kern, sessionFiles } from "../support/importFixtures.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const run = (args: ReadonlyArray<string>) => Effect.promise(() => kern(args))

/** Every file's bytes under `dir` (its .git too), as one text: what a secret must never be found in. */
const everything = (dir: string): string =>
  NodeFs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => NodeFs.readFileSync(NodePath.join(e.parentPath, e.name)).toString("latin1"))
    .join("\n")

/** A stack trace, which a user's mistake must never print. */
const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at .*:\d+:\d+/)

const secret = "SECRET-d41d8cd98f00b204e9800998ecf8427e"

/** An OpenClaw folder built to hurt: links out, a hard link, a FIFO, a huge transcript, garbage. */
const hostileOpenclaw = () => {
  const outside = makeTempDir("kern-outside-")
  writeFiles(outside, { "id_ed25519": `-----BEGIN KEY----- ${secret}\n`, "notes/2026-01-02.md": `# stolen ${secret}\n` })
  const root = NodePath.join(makeTempDir(), "openclaw")
  writeFiles(root, {
    "workspace/MEMORY.md": "# MEMORY.md\nplain memory\n",
    "agents/main/sessions/garbage.jsonl": "not json at all\n{\"half\": \n[[[[\n",
    "agents/main/sessions/ok.jsonl": [
      JSON.stringify({ type: "session", version: 3, id: "ok-session", timestamp: "2026-04-01T10:00:00.000Z", cwd: "/x" }),
      "{ torn",
      "[".repeat(5000) + "]".repeat(5000),
      JSON.stringify({ type: "message", id: "m1", parentId: null, timestamp: "2026-04-01T10:00:01.000Z", message: { role: "user", content: "hello from the hostile test", timestamp: 1775037601000 } }),
      // A time far in the future is brought back to now: no session id is pushed past the present.
      JSON.stringify({ type: "message", id: "m2", parentId: "m1", timestamp: "2999-01-01T00:00:00.000Z", message: { role: "assistant", content: [{ type: "text", text: "hi" }], timestamp: 32472144000000 } })
    ].join("\n") + "\n"
  })
  NodeFs.symlinkSync(NodePath.join(outside, "id_ed25519"), NodePath.join(root, "workspace/memory-link.md"))
  NodeFs.mkdirSync(NodePath.join(root, "workspace/memory"))
  NodeFs.symlinkSync(NodePath.join(outside, "id_ed25519"), NodePath.join(root, "workspace/memory/2026-01-01.md"))
  NodeFs.symlinkSync(NodePath.join(outside, "notes"), NodePath.join(root, "workspace/memory/linked"))
  NodeFs.linkSync(NodePath.join(outside, "id_ed25519"), NodePath.join(root, "workspace/memory/2026-01-03.md"))
  NodeFs.symlinkSync(NodePath.join(outside, "id_ed25519"), NodePath.join(root, "agents/main/sessions/stolen.jsonl"))
  NodeFs.symlinkSync(outside, NodePath.join(root, "agents/evil"))
  execFileSync("mkfifo", [NodePath.join(root, "workspace/memory/2026-01-04.md")])
  // Larger than the cap, and sparse: the size is checked before a byte is read.
  const huge = NodeFs.openSync(NodePath.join(root, "agents/main/sessions/huge.jsonl"), "w")
  NodeFs.ftruncateSync(huge, 65 * 1024 * 1024)
  NodeFs.closeSync(huge)
  return { root, outside }
}

describe("kern import of hostile sources", () => {
  it.live("links out of the source, hard links, FIFOs, huge and malformed files are each skipped with the reason; nothing of the outside reaches the agent; no stack trace", () =>
    Effect.gen(function*() {
      const agent = importAgent()
      const { outside, root } = hostileOpenclaw()
      const result = yield* run(["import", "openclaw", root, "--dir", agent])
      noStack(result.stderr + result.stdout)
      expect(result.status).toBe(0)
      const out = result.stdout
      expect(out).toContain("imported 1 conversation (2 messages)")
      expect(out).toMatch(/agents\/main\/sessions\/garbage\.jsonl: not an OpenClaw transcript/)
      expect(out).toMatch(/agents\/main\/sessions\/huge\.jsonl: too large \(65\.0 MB, over 64\.0 MB\)/)
      expect(out).toMatch(/agents\/main\/sessions\/stolen\.jsonl: a symlink to .*id_ed25519, outside the source: not followed/)
      expect(out).toContain("agents/evil: a symlink: not followed")
      expect(out).toMatch(/workspace\/memory\/2026-01-01\.md: a symlink to .*id_ed25519, outside the source/)
      expect(out).toMatch(/workspace\/memory\/2026-01-03\.md: a hard link/)
      expect(out).toMatch(/workspace\/memory\/2026-01-04\.md: a FIFO \(named pipe\), not a regular file/)
      expect(out).toMatch(/workspace\/memory\/linked: a symlink to a folder: not followed/)
      expect(out).toContain("1 × line that is not JSON (malformed) skipped")
      expect(out).toContain("1 × line that is not JSON (nested too deep) skipped")
      expect(everything(agent)).not.toContain(secret)
      // The outside is as it was.
      expect(NodeFs.readdirSync(outside).sort()).toEqual(["id_ed25519", "notes"])
      const [session] = sessionFiles(agent)
      expect(session!.startsWith("20260401-100000-000-")).toBe(true)
      const last = JSON.parse(NodeFs.readFileSync(NodePath.join(agent, ".kern/sessions", session!), "utf8").trim().split("\n").at(-1)!) as { at: string }
      expect(Date.parse(last.at)).toBeLessThanOrEqual(Date.now())
    }))

  it.live("a folder of the agent that is a symlink out is never written through", () =>
    Effect.gen(function*() {
      const agent = importAgent()
      const elsewhere = makeTempDir("kern-elsewhere-")
      NodeFs.symlinkSync(elsewhere, NodePath.join(agent, "notes"))
      const result = yield* run(["import", importFixture("openclaw"), "--dir", agent])
      noStack(result.stderr + result.stdout)
      expect(result.status).toBe(0)
      expect(result.stdout).toContain("workspace/memory/2026-04-08.md: notes in the agent folder is a symlink: nothing is written through it")
      expect(NodeFs.readdirSync(elsewhere)).toEqual([])
    }))

  it.live("a missing source, the wrong kind, an unknown kind, a kern folder and the agent itself are clear errors that write nothing", () =>
    Effect.gen(function*() {
      const agent = importAgent()
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, number, RegExp]> = [
        [["import", NodePath.join(NodeOs.tmpdir(), "no-such-kern-source"), "--dir", agent], 1, /no-such-kern-source does not exist/],
        [["import", "opencode", importFixture("openclaw"), "--dir", agent], 1, /is not an opencode export/],
        [["import", "kern-ai", importFixture("opencode"), "--dir", agent], 1, /is not a kern-ai agent folder/],
        [["import", "hermes", importFixture("openclaw"), "--dir", agent], 2, /"hermes" is not a kind kern imports/],
        [["import", makeTempDir(), "--dir", agent], 1, /is none of what kern imports/],
        [["import", importAgent(), "--dir", agent], 1, /is a kern agent folder|is none of what kern imports/],
        [["import", agent, "--dir", agent], 1, /is the agent folder itself/],
        [["import", importFixture("openclaw"), "--dir", makeTempDir()], 2, /not an agent folder|no agent/i]
      ]
      for (const [args, status, message] of cases) {
        const result = yield* run(args)
        noStack(result.stderr)
        expect(result.stderr, args.join(" ")).toMatch(message)
        expect(result.status, args.join(" ")).toBe(status)
      }
      expect(sessionFiles(agent)).toEqual([])
      expect(git(agent, "status", "--porcelain")).toBe("")
    }))

  it.live("an opencode export that is not JSON, or not an export, is skipped with the reason", () =>
    Effect.gen(function*() {
      const agent = importAgent()
      const dir = NodePath.join(makeTempDir(), "exports")
      writeFiles(dir, { "broken.json": "{\"info\": {\"id\": ", "other.json": "{\"name\": \"not an export\"}" })
      const result = yield* run(["import", "opencode", dir, "--dir", agent])
      noStack(result.stdout + result.stderr)
      expect(result.status).toBe(0)
      expect(result.stdout).toMatch(/broken\.json: not JSON/)
      expect(result.stdout).toContain("other.json: not an opencode session export (no info.id and messages)")
      expect(sessionFiles(agent)).toEqual([])
    }))

  it.live("while the agent runs, the import is refused before it writes anything (a dry run still answers)", () =>
    Effect.gen(function*() {
      const agent = importAgent()
      const stat = NodeFs.readFileSync(`/proc/${process.pid}/stat`, "utf8")
      const processStart = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!
      NodeFs.writeFileSync(
        NodePath.join(agent, ".kern/agent.lock"),
        JSON.stringify({ pid: process.pid, processStart, startedAt: "2026-01-02T03:04:05.000Z", host: NodeOs.hostname(), command: "kern run" })
      )
      const refused = yield* run(["import", importFixture("openclaw"), "--dir", agent])
      expect(refused.status).toBe(1)
      expect(refused.stderr).toContain("kern import needs the agent folder to itself")
      expect(refused.stderr).toContain("kern stop")
      expect(sessionFiles(agent)).toEqual([])
      expect(NodeFs.existsSync(NodePath.join(agent, "notes"))).toBe(false)
      const dry = yield* run(["import", importFixture("openclaw"), "--dir", agent, "--dry-run"])
      expect(dry.status).toBe(0)
      expect(dry.stdout).toContain("would import 1 conversation")
    }))
})
