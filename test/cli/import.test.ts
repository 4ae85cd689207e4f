import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { git, importAgent, importFixture, kern, kernAiSource, sessionFiles, sessionLines } from "../support/importFixtures.js"

const run = (args: ReadonlyArray<string>) => Effect.promise(() => kern(args))

const opencodeExport = NodePath.join(importFixture("opencode"), "ses_4f2a9c1e7ffeAbCdEfGh123456.json")

/** The lines of the one session file whose name holds `part`. */
const sessionWith = (agent: string, part: string) => {
  const names = sessionFiles(agent).filter((name) => name.includes(part))
  expect(names).toHaveLength(1)
  return { name: names[0]!, lines: sessionLines(agent, names[0]!) }
}

describe("kern import", () => {
  it.live("an opencode export becomes a session of its own with the original times, tool calls answered by their results; recall finds it; a second import adds nothing", () =>
    Effect.gen(function*() {
      const agent = importAgent()
      const first = yield* run(["import", "opencode", opencodeExport, "--dir", agent])
      expect(first.stderr).toBe("")
      expect(first.status).toBe(0)
      expect(first.stdout).toContain("imported 1 conversation (7 messages)")
      expect(first.stdout).toContain("1 × reasoning part (left out: kern keeps no reasoning)")
      const { lines, name } = sessionWith(agent, "_import-opencode-ses-4f2a9c1e7ffeAbCdEfGh123456-")
      expect(name.startsWith("20260101-000000-000-")).toBe(true)
      expect(lines[0]).toMatchObject({ _tag: "session", createdAt: "2026-01-01T00:00:00.000Z" })
      expect(lines.slice(1).map((l) => l["_tag"])).toEqual(["user", "assistant", "tool", "tool", "assistant", "user", "assistant"])
      expect(lines[1]).toMatchObject({ text: expect.stringContaining("marmalade price shows 3.999"), at: "2026-01-01T00:00:00.000Z" })
      expect(lines[1]!["text"]).toContain("[file: cart.ts (text/plain)]")
      expect(lines[2]).toMatchObject({
        text: "Let me read the cart code.",
        toolCalls: [
          { id: "toolu_read_1", name: "read", params: { filePath: "/home/ada/jam-shop/src/cart.ts" } },
          { id: "toolu_bash_1", name: "bash", params: { command: "npm test" } }
        ],
        at: "2026-01-01T00:00:10.000Z"
      })
      expect(lines[3]).toMatchObject({ toolCallId: "toolu_read_1", isError: false, result: expect.stringContaining("items.reduce") })
      expect(lines[4]).toMatchObject({ toolCallId: "toolu_bash_1", isError: true, result: "Command failed: 1 test failing" })
      expect(lines[6]).toMatchObject({ _tag: "user", text: "Thanks, that fixed it.", at: "2026-01-01T00:03:20.000Z" })

      const found = yield* run(["recall", "search", "marmalade", "--dir", agent, "--json"])
      expect(found.status).toBe(0)
      const hits = (JSON.parse(found.stdout) as { hits: ReadonlyArray<{ sessionId?: string }> }).hits
      expect(hits.map((h) => h.sessionId)).toContain(name.slice(0, -".jsonl".length))
      const listed = yield* run(["sessions", "list", "--dir", agent])
      expect(listed.stdout).toContain(name.slice(0, -".jsonl".length))

      const again = yield* run(["import", opencodeExport, "--dir", agent])
      expect(again.status).toBe(0)
      expect(again.stdout).toContain("imported 0 conversations (0 messages); 1 conversation imported before, left as they are")
      expect(sessionFiles(agent)).toEqual([name])
    }))

  it.live("an OpenClaw folder: its transcript as a session (bookkeeping left out and said, a malformed line skipped), daily logs as notes, MEMORY.md and other memory under knowledge/openclaw, one commit; twice is once", () =>
    Effect.gen(function*() {
      const agent = importAgent()
      const result = yield* run(["import", importFixture("openclaw"), "--dir", agent, "--json"])
      expect(result.stderr).toBe("")
      expect(result.status).toBe(0)
      const summary = JSON.parse(result.stdout) as {
        kind: string
        sessions: ReadonlyArray<{ messages: number; notes: ReadonlyArray<string> }>
        memory: ReadonlyArray<{ from: string; to: string; outcome: string }>
        commit: string
        indexed: number
      }
      expect(summary.kind).toBe("openclaw")
      expect(summary.sessions).toHaveLength(1)
      expect(summary.sessions[0]!.notes).toEqual(expect.arrayContaining([
        "1 × line that is not JSON (malformed) skipped",
        "1 × model_change entry (bookkeeping, not conversation)",
        "1 × thinking part (left out: kern keeps no reasoning)",
        "1 × compaction summary (kept as the assistant's text)"
      ]))
      expect(summary.memory.map((m) => [m.from, m.to, m.outcome])).toEqual([
        ["workspace/MEMORY.md", "knowledge/openclaw/MEMORY.md", "written"],
        ["workspace/memory/2026-04-08.md", "notes/2026-04-08.md", "written"],
        ["workspace/memory/projects/garden.md", "knowledge/openclaw/memory/projects/garden.md", "written"]
      ])
      expect(NodeFs.readFileSync(NodePath.join(agent, "notes/2026-04-08.md"), "utf8")).toContain("zeppelin museum tickets")
      expect(git(agent, "log", "-1", "--format=%s")).toContain("kern: import openclaw memory from")
      expect(git(agent, "status", "--porcelain")).toBe("")
      expect(summary.indexed).toBe(8)

      const { lines } = sessionWith(agent, "_import-openclaw-b7300bff-a214-4c11-97ae-eab26883c67a-")
      expect(lines.slice(1).map((l) => l["_tag"])).toEqual(["user", "assistant", "tool", "assistant", "assistant", "assistant", "tool", "assistant"])
      expect(lines[1]).toMatchObject({ text: "Book the zeppelin museum for Saturday morning, please.", at: "2026-04-08T01:04:00.000Z" })
      expect(lines[2]).toMatchObject({ text: "Checking your calendar.", toolCalls: [{ id: "call_1", name: "exec", params: { command: "cal --saturday" } }] })
      expect(lines[3]).toMatchObject({ toolCallId: "call_1", result: "Saturday 11 April: free until noon", isError: false })
      expect(lines[5]!["text"]).toContain("[compaction summary]")
      expect(lines[6]).toMatchObject({ toolCalls: [{ name: "bash", params: { command: "ls tickets" } }] })
      // Its last turn closed, so recall indexes it whole.
      expect(lines[8]).toMatchObject({ _tag: "assistant", text: "(the imported openclaw session ends here)" })

      const found = yield* run(["recall", "search", "zeppelin", "--dir", agent])
      expect(found.stdout).toContain("_import-openclaw-")
      const notes = yield* run(["recall", "search", "tomatoes frost", "--dir", agent])
      expect(notes.stdout).toContain("knowledge/openclaw/memory/projects/garden.md")

      const commits = git(agent, "rev-list", "--count", "HEAD")
      const again = yield* run(["import", "openclaw", importFixture("openclaw"), "--dir", agent])
      expect(again.status).toBe(0)
      expect(again.stdout).toContain("1 conversation imported before")
      expect(again.stdout).toContain("memory: wrote 0 files; 3 files already there")
      expect(git(agent, "rev-list", "--count", "HEAD")).toBe(commits)
      expect(sessionFiles(agent)).toHaveLength(1)
    }))

  it.live("a kern-ai agent folder: sessions with their envelopes and recall.db's times, a conversation only recall.db still holds, memory beside the agent's own (IDENTITY.md kept, the import renamed)", () =>
    Effect.gen(function*() {
      const agent = importAgent()
      const source = kernAiSource()
      const result = yield* run(["import", source, "--dir", agent])
      expect(result.stderr).toBe("")
      expect(result.status).toBe(0)
      expect(result.stdout).toContain("kern-ai")
      expect(result.stdout).toContain("imported 2 conversations (10 messages)")
      expect(result.stdout).toContain("IDENTITY.md → IDENTITY.imported-kern-ai.md (renamed: a different file has its name)")
      expect(NodeFs.readFileSync(NodePath.join(agent, "IDENTITY.md"), "utf8")).toContain("I am the test agent.")
      expect(NodeFs.readFileSync(NodePath.join(agent, "IDENTITY.imported-kern-ai.md"), "utf8")).toContain("I am Vega")
      expect(NodeFs.existsSync(NodePath.join(agent, "knowledge/telescope.md"))).toBe(true)

      const { lines, name } = sessionWith(agent, "_import-kern-ai-3f1c2b9e-")
      expect(name.startsWith("20260302-220000-000-")).toBe(true)
      expect(lines[1]).toMatchObject({
        _tag: "user",
        text: "Which quasar can we see tonight?",
        envelope: { interface: "tui", channel: "operator", userId: "oguz", time: "2026-03-02T23:05:00+01:00" },
        at: "2026-03-02T22:05:00.000Z"
      })
      expect(lines[2]).toMatchObject({ toolCalls: [{ id: "call_sky", name: "bash", params: { command: "sky --tonight" } }] })
      expect(lines[3]).toMatchObject({ toolCallId: "call_sky", result: "3C 273 visible from 22:40, altitude 41°" })
      expect(lines[5]).toMatchObject({ envelope: { interface: "telegram", channel: "42", userId: "ada" }, text: "Great, note it for tomorrow.\n[image: image/png]" })
      // The last call had no result in kern-ai's session: recorded as such, never left dangling.
      expect(lines[7]).toMatchObject({ _tag: "tool", toolCallId: "call_note", isError: true })
      const orphan = sessionWith(agent, "_import-kern-ai-0a0b0c0d-")
      expect(orphan.lines[2]).toMatchObject({ _tag: "assistant", text: expect.stringContaining("OIII nebula filter") })

      const found = yield* run(["recall", "search", "nebula", "--dir", agent])
      expect(found.stdout).toContain("_import-kern-ai-0a0b0c0d-")
    }))

  it.live("--dry-run says what would be imported and writes nothing", () =>
    Effect.gen(function*() {
      const agent = importAgent()
      const result = yield* run(["import", importFixture("openclaw"), "--dir", agent, "--dry-run"])
      expect(result.status).toBe(0)
      expect(result.stdout).toContain("dry run: openclaw")
      expect(result.stdout).toContain("would import 1 conversation")
      expect(result.stdout).toContain("memory: would write 3 files")
      expect(sessionFiles(agent)).toEqual([])
      expect(NodeFs.existsSync(NodePath.join(agent, "notes"))).toBe(false)
      expect(git(agent, "rev-list", "--count", "HEAD").trim()).toBe("1")
    }))
})
