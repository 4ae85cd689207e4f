import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Recall } from "../../src/recall/Recall.js"
import { FakeReply, makeWith, type RecordedRequest } from "../support/fakeModelServer.js"
import { runKernIn } from "../support/inProcessCli.js"
import { operatorTurn, testRuntime } from "../support/operatorTurn.js"
import { writeSessionFixture } from "../support/sessionFixture.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const env = { OPENAI_API_KEY: "sk-test" }
const kern = (args: ReadonlyArray<string>) => Effect.promise(() => runKernIn(args, { env }))

const git = (dir: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir, encoding: "utf8" })

/** The request of the turn that carries `text` (a turn's request offers tools; a summary's does not). */
const turnRequest = (requests: ReadonlyArray<RecordedRequest>, text: string) =>
  requests.filter((r) => r.path === "/responses" && (r.body as { tools?: unknown }).tools !== undefined && JSON.stringify(r.body).includes(text)).at(-1)

/** A Responses request's items after the system prompt (which names the time and the folder). */
const conversationOf = (request: RecordedRequest | undefined) => {
  const [system, ...rest] = (request?.body as { input: ReadonlyArray<{ content?: unknown }> }).input
  const summary = /<conversation_summary>[\s\S]*<\/conversation_summary>/.exec(JSON.stringify(system?.content))?.[0]
  // The message's own envelope names the moment it was sent.
  return { summary, rest: JSON.parse(JSON.stringify(rest).replace(/time: [^\]]*\]/g, "time: T]")) as unknown }
}

/** An agent folder with memory history in git, a long conversation (an old exchange about a key, then 600 messages). */
const agentWithHistory = (baseURL: string) => {
  const dir = NodePath.join(makeTempDir(), "agent")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({
      provider: "openai",
      model: "test-model",
      baseURL,
      embeddingModel: "test-embedding",
      maxContextTokens: 8_000,
      autoRecall: true
    }),
    ".gitignore": ".kern/\n",
    "IDENTITY.md": "# IDENTITY.md\nI am the test agent.\n"
  })
  git(dir, "init", "-q")
  git(dir, "add", "-A")
  git(dir, "commit", "-qm", "first")
  NodeFs.writeFileSync(NodePath.join(dir, "KNOWLEDGE.md"), "# Knowledge\nThe boat is at pier 7.\n")
  git(dir, "add", "-A")
  git(dir, "commit", "-qm", "second")
  const path = writeSessionFixture(dir, 600)
  const [header, ...rest] = NodeFs.readFileSync(path, "utf8").split("\n")
  const old = [
    { _tag: "user", text: "remember: the spare key is under the blue flowerpot by the shed", at: "2026-11-01T10:00:00.000Z" },
    { _tag: "assistant", text: "Noted: spare key, blue flowerpot, by the shed.", toolCalls: [], at: "2026-11-01T10:00:01.000Z" }
  ].map((line) => JSON.stringify(line))
  NodeFs.writeFileSync(path, [header, ...old, ...rest].join("\n"))
  return dir
}

describe("kern backup, backup verify, restore", () => {
  it.live("round trip: the restored agent has the history, recalls, and continues with the same context window and summaries", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeWith({ fallback: FakeReply.text("We went over the router settings again.") })
      yield* server.embeddings({ bagOfWords: { dimensions: 256 } })
      const dir = agentWithHistory(server.baseURL)
      // As a long-running agent leaves it: indexed, a turn answered, its summaries made.
      const first = yield* Effect.gen(function*() {
        yield* Effect.flatMap(Recall, (recall) => recall.backfill)
        return yield* operatorTurn("what changed on the router?")
      }).pipe(Effect.provide(testRuntime(dir)))
      expect(first.outcome.failure).toBeUndefined()

      const archive = NodePath.join(makeTempDir(), "agent.tar.gz")
      const made = yield* kern(["backup", dir, "-o", archive])
      expect(made.status, made.stderr).toBe(0)
      expect(made.stderr).toContain("copied kern.db")
      expect(made.stdout).toContain("the memory repository (2 commits), 1 session")
      expect(NodeFs.statSync(archive).mode & 0o777).toBe(0o600)
      expect(NodeFs.readdirSync(NodePath.dirname(archive))).toEqual(["agent.tar.gz"])

      const verified = yield* kern(["backup", "verify", archive])
      expect(verified.status, verified.stderr).toBe(0)
      expect(verified.stdout).toMatch(/^ok: .*match the manifest, the memory bundle verifies \(1 ref\), kern.db passes/)

      const restored = NodePath.join(makeTempDir(), "restored")
      const back = yield* kern(["restore", archive, "--dir", restored])
      expect(back.status, back.stderr).toBe(0)
      expect(back.stdout).toContain("the backup holds no secrets")
      expect(git(restored, "log", "--format=%s")).toBe("second\nfirst\n")
      expect(git(restored, "status", "--porcelain")).toBe("")
      expect(NodeFs.readFileSync(NodePath.join(restored, "KNOWLEDGE.md"), "utf8")).toContain("pier 7")

      // The same next request, summaries and cut included.
      const shown = (at: string) => Effect.map(kern(["context", "show", "--json", "--dir", at]), (result) => {
        expect(result.status, result.stderr).toBe(0)
        const json = JSON.parse(result.stdout) as { cut: number; messages: number; injected: unknown; tokens: { raw: number } }
        return { cut: json.cut, messages: json.messages, injected: json.injected, raw: json.tokens.raw }
      })
      const original = yield* shown(dir)
      expect(original.injected).not.toEqual([])
      expect(yield* shown(restored)).toEqual(original)

      // Recall answers from the restored index.
      const search = yield* kern(["recall", "search", "spare key flowerpot", "--json", "--dir", restored])
      expect(search.status, search.stderr).toBe(0)
      expect(search.stdout).toContain("blue flowerpot")

      // The conversation goes on: the same request in both, the summary and the recalled exchange in it.
      const question = "where is the spare key, under which flowerpot?"
      const again = yield* operatorTurn(question).pipe(Effect.provide(testRuntime(restored)))
      expect(again.outcome.failure).toBeUndefined()
      const fromRestored = conversationOf(turnRequest(yield* server.requests, question))
      expect(fromRestored.summary).toBeDefined()
      expect(JSON.stringify(fromRestored.rest)).toContain("blue flowerpot")
      yield* operatorTurn(question).pipe(Effect.provide(testRuntime(dir)))
      const fromOriginal = conversationOf(turnRequest(yield* server.requests, question))
      expect(fromRestored).toEqual(fromOriginal)
    })), 120_000)
})
