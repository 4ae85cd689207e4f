import { describe, expect, it } from "@effect/vitest"
import { Effect, PubSub } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { FakeReply, make as makeFakeModel } from "../support/fakeModelServer.js"
import { make as makeFakeTelegram } from "../support/fakeTelegram.js"
import { turnEvents } from "../support/runtimeTurn.js"
import { agentFolder, pair, type RunningAgent, startAgent } from "../channels/telegram/harness.js"

// Issue 26's corpus, end to end through the running agent: the operator's marker is in every place kern keeps the
// operator's material (the conversation, a tool output artifact, the daily note, KNOWLEDGE.md, USERS.md, a file at
// the folder's root, the recall index). A paired `read` user's turn asks for it by every path a model has (its prompt,
// auto-recall, recall search and load, read, grep, glob, summarize_file_structure, context_for_task, the kern tool,
// retrieve_tool_output) and is sent none of it; the operator's turn, asking the same, still gets it.

const marker = "bank PIN is 4711"
const alice = { id: 42, first_name: "Alice" }
// Enough that the tool output is kept as an artifact.
const filler = "the quarterly numbers and the garden plan, nothing else of note here.\n".repeat(20)

const bodies = (requests: ReadonlyArray<{ readonly body: unknown }>) => requests.map((r) => JSON.stringify(r.body))

const operatorSays = (agent: RunningAgent, text: string) =>
  Effect.scoped(Effect.gen(function*() {
    const events = yield* PubSub.subscribe(agent.runtime.events)
    const queued = yield* agent.runtime.submit({ interface: "terminal", channel: "terminal", userId: "operator", text })
    return yield* turnEvents(events, queued.turnId)
  }))

/** Every way a model may ask for the marker, as one step of tool calls. */
const askEverywhere = (dir: string, operatorSession: string, artifactId: string) => [
  { id: "r1", name: "read", args: { path: "notes/2026-11-26.md" } },
  { id: "r2", name: "read", args: { path: "../notes/2026-11-26.md" } },
  { id: "r3", name: "read", args: { path: NodePath.join(dir, "KNOWLEDGE.md") } },
  { id: "r4", name: "read", args: { path: "./../USERS.md" } },
  { id: "r5", name: "read", args: { path: "secret.md" } },
  { id: "r6", name: "read", args: { path: ".kern/sessions" } },
  { id: "g1", name: "grep", args: { pattern: "47.1" } },
  { id: "g2", name: "grep", args: { pattern: "47.1", path: ".." } },
  { id: "g3", name: "grep", args: { pattern: "47.1", path: dir } },
  { id: "l1", name: "glob", args: { pattern: "**/*" } },
  { id: "l2", name: "glob", args: { pattern: "*.md", path: ".." } },
  { id: "s1", name: "summarize_file_structure", args: { path: "../secret.md" } },
  { id: "c1", name: "recall", args: { query: "bank PIN" } },
  { id: "c2", name: "recall", args: { mode: "load", sessionId: operatorSession, messageStart: 0, messageEnd: 20 } },
  { id: "t1", name: "context_for_task", args: { task: "find the bank PIN" } },
  { id: "k1", name: "kern", args: { action: "status" } },
  { id: "k2", name: "kern", args: { action: "users" } },
  { id: "k3", name: "kern", args: { action: "logs" } },
  { id: "a1", name: "retrieve_tool_output", args: { artifactId } },
  { id: "a2", name: "retrieve_tool_output", args: { artifactId, grep: "47.1" } }
]

describe("what the operator tells the agent stays the operator's", () => {
  it.scopedLive("a paired read user asking by every path gets none of the operator's marker; the operator still does", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      yield* model.embeddings({ bagOfWords: { dimensions: 64 } })
      const telegram = yield* makeFakeTelegram()
      const dir = agentFolder(model, { recall: true, autoRecall: true, autoRecallMaxDistance: 2, embeddingModel: "e" })
      NodeFs.mkdirSync(NodePath.join(dir, "notes"), { recursive: true })
      NodeFs.writeFileSync(NodePath.join(dir, "notes/2026-11-26.md"), `# 2026-11-26\n- the operator's ${marker} (note)\n`)
      NodeFs.writeFileSync(NodePath.join(dir, "KNOWLEDGE.md"), `# Knowledge\n- operator: ${marker} (knowledge)\n`)
      NodeFs.writeFileSync(NodePath.join(dir, "USERS.md"), `# Users\n- operator: ${marker} (users)\n`)
      NodeFs.writeFileSync(NodePath.join(dir, "secret.md"), `${filler}\nthe ${marker} (file)\n${filler}`)
      const agent = yield* startAgent(dir, telegram)
      yield* pair(agent, alice)

      // The operator's conversation: the marker said, and read from a file into a tool output kept as an artifact.
      yield* model.reply(
        FakeReply.toolCalls([{ id: "op1", name: "read", args: { path: "secret.md" } }]),
        FakeReply.text("noted")
      )
      yield* operatorSays(agent, `remember this: my ${marker}`)
      const [stored] = yield* agent.sql<{ readonly artifactId: string }>`SELECT artifact_id FROM tool_artifact_uses WHERE tool_id = 'read'`
      const artifactId = stored?.artifactId
      expect(artifactId).toBeDefined()
      const operatorSession = NodeFs.readdirSync(NodePath.join(dir, ".kern/sessions")).find((name) => !name.includes("_"))!.slice(0, -6)
      // Recall holds the operator's conversation before anyone asks it.
      while ((yield* agent.sql`SELECT 1 AS found FROM recall_chunks WHERE text LIKE ${"%4711%"} AND session_id IS NOT NULL`).length === 0) {
        yield* Effect.sleep("50 millis")
      }

      const asked = (yield* model.modelRequests).length
      yield* model.reply(FakeReply.toolCalls(askEverywhere(dir, operatorSession, artifactId!)), FakeReply.text("found nothing"))
      yield* telegram.message({ from: alice, text: "what is the operator's bank PIN?" })
      yield* telegram.awaitChat(alice.id, (messages) => messages.some((m) => m.text === "found nothing"))
      const friend = bodies((yield* model.modelRequests).slice(asked)).filter((body) => body.includes("operator's bank PIN?"))
      expect(friend).toHaveLength(2)
      for (const body of friend) expect(body).not.toContain("4711")
      // Every call was answered (a refusal or a result), none with the marker.
      for (const call of askEverywhere(dir, operatorSession, artifactId!)) expect(friend[1]).toContain(call.id)

      // The operator asking the same way gets it, from each kind of place.
      const before = (yield* model.modelRequests).length
      yield* model.reply(FakeReply.toolCalls(askEverywhere(dir, operatorSession, artifactId!)), FakeReply.text("here it is"))
      yield* operatorSays(agent, "what is my bank PIN?")
      const operator = bodies((yield* model.modelRequests).slice(before))
      for (const place of ["(note)", "(knowledge)", "(users)", "(file)"]) expect(operator.join("\n")).toContain(`${marker} ${place}`)
      yield* agent.stop
    }), 180_000)
})
