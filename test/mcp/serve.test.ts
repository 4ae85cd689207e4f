import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { initAgentWithModel } from "../support/agentFolder.js"
import { killedAtEnd } from "../support/backgroundAgent.js"
import { kernBin, runKern } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"

const env = { OPENROUTER_API_KEY: "sk-test" }
const secret = "zq-SECRET-value-481516"

const kern = (args: ReadonlyArray<string>, cwd: string) => Effect.promise(() => runKern(args, { cwd, env }))

/** The official SDK's client on `kern mcp serve` over stdio, closed (stdin ended) when the test's scope closes. */
const connect = (dir: string, flags: ReadonlyArray<string> = []) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [kernBin, "mcp", "serve", dir, ...flags],
        env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", ...env },
        stderr: "pipe"
      })
      const client = new Client({ name: "test-peer", version: "1.0.0" })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

interface Answer {
  readonly isError: boolean
  readonly text: string
  readonly structured: unknown
}

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(async (): Promise<Answer> => {
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 100_000 })
    const content = result.content as ReadonlyArray<{ type: string; text?: string }>
    return {
      isError: result.isError === true,
      text: content.map((part) => part.text ?? "").join("\n"),
      structured: result.structuredContent
    }
  })

describe("kern mcp serve", () => {
  it.live("serves recall and the memory files read-only, through the one door and the one redactor", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      NodeFs.appendFileSync(NodePath.join(dir, ".kern/.env"), `\nBACKUP_TOKEN=${secret}\n`)
      NodeFs.mkdirSync(NodePath.join(dir, "knowledge"), { recursive: true })
      NodeFs.mkdirSync(NodePath.join(dir, "notes"), { recursive: true })
      NodeFs.writeFileSync(NodePath.join(dir, "knowledge/hosts.md"), `# Hosts\nThe backup host is zebrafish-7; its token is ${secret}.\n`)
      NodeFs.writeFileSync(NodePath.join(dir, "notes/2026-11-20.md"), "Met the team about the pelican launch.\n")
      // A conversation in a session: recall indexes it as the chat ends.
      yield* server.reply(FakeReply.text("Noted: the code word is marmalade."))
      const chat = yield* kern(["chat", "-m", "remember that the code word is marmalade"], dir)
      expect(chat.status, chat.stderr).toBe(0)
      const reindex = yield* kern(["recall", "reindex"], dir)
      expect(reindex.status, reindex.stderr).toBe(0)

      const client = yield* connect(dir)
      const { tools } = yield* Effect.promise(() => client.listTools())
      expect(tools.map((tool) => tool.name).sort()).toEqual(["read_memory", "recall_load", "recall_search"])
      for (const tool of tools) expect(tool.annotations?.readOnlyHint).toBe(true)

      const file = yield* call(client, "recall_search", { query: "zebrafish" })
      expect(file.isError, file.text).toBe(false)
      expect(file.text).toContain("knowledge/hosts.md")
      expect(file.text).toContain("[redacted:BACKUP_TOKEN]")
      expect(JSON.stringify(file)).not.toContain(secret)

      const talk = yield* call(client, "recall_search", { query: "marmalade" })
      const hit = (talk.structured as { hits: ReadonlyArray<{ sessionId: string | null; messageStart: number; messageEnd: number }> })
        .hits.find((h) => h.sessionId !== null)
      expect(hit, talk.text).toBeDefined()
      const loaded = yield* call(client, "recall_load", { sessionId: hit!.sessionId, messageStart: hit!.messageStart, messageEnd: hit!.messageEnd })
      expect(loaded.isError, loaded.text).toBe(false)
      expect(loaded.text).toContain("the code word is marmalade")

      const listing = yield* call(client, "read_memory", { path: "notes" })
      expect(listing.text).toBe("notes/2026-11-20.md")
      const note = yield* call(client, "read_memory", { path: "notes/2026-11-20.md" })
      expect(note).toMatchObject({ isError: false, text: "Met the team about the pelican launch.\n" })
      const hosts = yield* call(client, "read_memory", { path: "knowledge/hosts.md" })
      expect(hosts.text).toContain("[redacted:BACKUP_TOKEN]")
      expect(hosts.text).not.toContain(secret)

      // What another agent must never read: the names outside knowledge/ and notes/, and the files inside them that
      // lead elsewhere (a symlink into .kern/, a hard link to .kern/.env, a link out of the folder, a FIFO).
      NodeFs.symlinkSync(NodePath.join(dir, ".kern/.env"), NodePath.join(dir, "knowledge/env.md"))
      NodeFs.symlinkSync("../.kern", NodePath.join(dir, "knowledge/kern"))
      NodeFs.linkSync(NodePath.join(dir, ".kern/.env"), NodePath.join(dir, "notes/2026-11-21.md"))
      NodeFs.symlinkSync("/etc/passwd", NodePath.join(dir, "knowledge/passwd.md"))
      const attacks = [
        ".kern/.env",
        "knowledge/../.kern/.env",
        "notes/../../etc/passwd",
        "/etc/passwd",
        `${dir}/.kern/.env`,
        "knowledge\\..\\.kern\\.env",
        "AGENTS.md",
        "./.kern/config.json",
        "",
        "knowledge/env.md",
        "knowledge/kern/.env",
        "notes/2026-11-21.md",
        "knowledge/passwd.md",
        "knowledge/missing.md"
      ]
      for (const path of attacks) {
        const answer = yield* call(client, "read_memory", { path })
        expect(answer.isError, `${path}: ${answer.text}`).toBe(true)
        expect(answer.text, path).not.toContain(secret)
        expect(answer.text, path).not.toContain("KERN_AUTH_TOKEN=")
        expect(answer.text, path).not.toContain("root:")
      }
      const badArgs = yield* call(client, "read_memory", { path: 5 })
      expect(badArgs).toMatchObject({ isError: true })
      expect(badArgs.text).toContain("read_memory: bad arguments")
    })))

  it.live("--allow-send: send_message is answered by the running agent in the peer's own conversation, not the operator's", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* killedAtEnd(dir)
      const client = yield* connect(dir, ["--allow-send", "--peer", "reviewer", "--wait", "0"])
      const { tools } = yield* Effect.promise(() => client.listTools())
      expect(tools.map((tool) => tool.name)).toContain("send_message")

      const early = yield* call(client, "send_message", { text: "are you there?" })
      expect(early.isError).toBe(true)
      expect(early.text).toContain("is not running")
      expect(early.text).toContain("kern start")

      const started = yield* kern(["start"], dir)
      expect(started.status, started.stderr).toBe(0)
      yield* server.reply(FakeReply.text("Hello, reviewer agent."))
      const answer = yield* call(client, "send_message", { text: "please review the plan" })
      expect(answer, answer.text).toMatchObject({ isError: false, text: "Hello, reviewer agent." })

      const sessions = NodeFs.readdirSync(NodePath.join(dir, ".kern/sessions")).filter((name) => name.endsWith(".jsonl"))
      const peer = sessions.filter((name) => name.endsWith("_mcp-reviewer.jsonl"))
      expect(peer, sessions.join(", ")).toHaveLength(1)
      expect(NodeFs.readFileSync(NodePath.join(dir, ".kern/sessions", peer[0]!), "utf8")).toContain("please review the plan")
      for (const other of sessions.filter((name) => !peer.includes(name))) {
        expect(NodeFs.readFileSync(NodePath.join(dir, ".kern/sessions", other), "utf8")).not.toContain("please review the plan")
      }
      yield* kern(["stop"], dir)
    })))

  it.live("a folder that is not an agent's is a usage mistake, not a server", () =>
    Effect.gen(function*() {
      const result = yield* kern(["mcp", "serve", "/nonexistent/agent"], "/tmp")
      expect(result.status).toBe(2)
      expect(result.stderr).toContain("is not an agent folder")
      expect(result.stderr).not.toContain("    at ")
    }))
})
