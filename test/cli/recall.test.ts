import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { initAgentWithModel } from "../support/agentFolder.js"
import { runKern } from "../support/cli.js"
import { runKernIn } from "../support/inProcessCli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

/** A command in this process (the one-shot chats stay processes of their own: a process is what a chat is). */
const kern = (args: ReadonlyArray<string>, options: { readonly dir?: string; readonly env?: Record<string, string> } = {}) =>
  Effect.promise(() => runKernIn(options.dir === undefined ? args : [...args, "--dir", options.dir], { env: options.env ?? {} }))

describe("kern recall", () => {
  it.live("a chat is findable by `kern recall search` right after it exits; stats and status show the index", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      yield* server.embeddings({ bagOfWords: { dimensions: 32 } })
      const dir = initAgentWithModel(server.baseURL)
      NodeFs.writeFileSync(NodePath.join(dir, "knowledge", "boat.md"), "# Boat\n\nThe sailboat is moored at pier 7 in Kiel.\n")
      yield* server.reply(FakeReply.text("The grey heron nests by the pond every spring."))
      const chat = yield* Effect.promise(() => runKern(["chat", "-m", "which bird nests by the pond?"], { cwd: dir, env }))
      expect(chat.status, chat.stderr).toBe(0)

      const search = yield* kern(["recall", "search", "heron", "--json"], { dir, env })
      expect(search.status, search.stderr).toBe(0)
      const result = JSON.parse(search.stdout)
      expect(result.mode).toBe("hybrid")
      expect(result.hits[0].text).toContain("grey heron nests by the pond")
      expect(result.hits[0].source).toBe("session")
      expect(result.hits[0].messageStart).toBe(0)

      const human = yield* kern(["recall", "search", "which bird", dir, "--limit", "1"], { env })
      expect(human.status, human.stderr).toBe(0)
      expect(human.stdout).toMatch(/^1\. session \S+ messages 0-1 \(/)

      const stats = JSON.parse((yield* kern(["recall", "stats", "--json"], { dir, env })).stdout)
      expect(stats).toMatchObject({ enabled: true, messages: 2, chunks: 1, sessions: 1, backfillRunning: false })
      expect(stats.embedding).toMatchObject({ mode: "vectors", model: "openai/text-embedding-3-small", dimension: 32 })

      // The knowledge file comes in with a full pass (a reindex here), with progress on stderr.
      const reindex = yield* kern(["recall", "reindex"], { dir, env })
      expect(reindex.status, reindex.stderr).toBe(0)
      expect(reindex.stderr).toContain("1/1 sessions, 2 messages")
      const boat = JSON.parse(
        (yield* kern(["recall", "search", "where is the sailboat moored", "--json"], { dir, env })).stdout
      )
      expect(boat.hits[0]).toMatchObject({ source: "file", path: "knowledge/boat.md" })

      const status = yield* kern(["status"], { dir, env })
      expect(status.stdout).toMatch(/recall: +2 messages in 2 chunks from 1 session, 1 file, \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d; embeddings: openai\/text-embedding-3-small, 32 dimensions/)
      const statusJson = JSON.parse((yield* kern(["status", "--json"], { dir, env })).stdout)
      expect(statusJson.recall).toMatchObject({ messages: 2, chunks: 2, embedding: { dimension: 32 } })
    })))

  it.live("keyword-only when embeddings are off; bad flags are usage errors (exit 2); a folder that is no agent is refused", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL, { embeddingModel: false })
      yield* server.reply(FakeReply.text("Noted: the spare key is under the blue flowerpot."))
      const chat = yield* Effect.promise(() => runKern(["chat", "-m", "remember where the spare key is"], { cwd: dir, env }))
      expect(chat.status, chat.stderr).toBe(0)
      expect((yield* server.requests).some((r) => r.path === "/embeddings")).toBe(false)
      const result = JSON.parse((yield* kern(["recall", "search", "flowerpot", "--json"], { dir })).stdout)
      expect(result.mode).toBe("keyword")
      expect(result.hits[0].text).toContain("blue flowerpot")
      const stats = yield* kern(["recall", "stats"], { dir })
      expect(stats.stdout).toContain("embeddings: keyword-only (embeddingModel is false)")
      const bad = yield* kern(["recall", "search", "key", "--before", "yesterday"], { dir })
      expect(bad.status).toBe(2)
      expect(bad.stderr).toContain("--before must be a date")
      const limit = yield* kern(["recall", "search", "key", "--limit", "0"], { dir })
      expect(limit.status).toBe(2)
      const nowhere = yield* kern(["recall", "stats", NodePath.join(dir, "nope")])
      expect(nowhere.status).toBe(2)
      expect(NodeFs.existsSync(NodePath.join(dir, "nope"))).toBe(false)
    })))
})
