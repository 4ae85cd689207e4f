import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Agent from "../../src/agent/Agent.js"
import type { TurnEvent } from "../../src/turn/TurnEvent.js"
import { AgentConfig } from "../../src/config/AgentConfig.js"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import * as RecallLayers from "../../src/recall/layers.js"
import { Recall } from "../../src/recall/Recall.js"
import * as Database from "../../src/storage/Database.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { answer, appendLines, callTool, header, loadedAt, makeAgentDir, sessionPath, toolResult, user } from "../recall/harness.js"

// Known secrets: one from `.kern/.env`, one a token kern reads from the environment.
const dotenvSecret = "tok_live_7Qx9Vb2Lm4Np8Rs6Tw1Yz3"
const envSecret = "xoxb-1234567890-abcdefghijklmnop"
const secrets = [dotenvSecret, envSecret]

/** Every form a text could carry a secret in that the redactor claims: the plain value, anywhere in a string. */
const carriers = (secret: string) => [
  `the key is ${secret}.`,
  `${secret}`,
  `prefix${secret}suffix`,
  `json: {"auth":"${secret}"}`,
  `twice ${secret} and ${secret}`
]

const holdsNoSecret = (what: string, text: string) => {
  for (const secret of secrets) expect(text.includes(secret), `${what} holds ${secret.slice(0, 6)}…`).toBe(false)
}

const sessionFiles = (dir: string) => {
  const sessions = NodePath.join(dir, ".kern", "sessions")
  return NodeFs.readdirSync(sessions).map((name) => NodeFs.readFileSync(NodePath.join(sessions, name), "utf8"))
}

describe("no known secret is stored or sent, whoever wrote it", () => {
  it.live("the model's reply (streamed in pieces), its tool-call arguments and the user's text: session, model requests, events", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      NodeFs.writeFileSync(NodePath.join(dir, ".kern", ".env"), `SERVICE_TOKEN=${dotenvSecret}\n`, { mode: 0o600 })
      const replies = carriers(dotenvSecret).concat(carriers(envSecret))
      yield* server.reply(
        FakeReply.toolCalls(
          [{ id: "c1", name: "read", args: { path: `notes/${dotenvSecret}.md`, [envSecret]: envSecret } }],
          { text: `Reading with ${envSecret} now.` }
        ),
        // The fake streams each text in three deltas: a secret arrives split across them.
        FakeReply.text(replies.join("\n"))
      )
      const events: Array<TurnEvent> = []
      const outcome = yield* Agent.send(`here is my token ${dotenvSecret} and ${envSecret}`, {
        onEvent: (event) => Effect.sync(() => events.push(event))
      }).pipe(Effect.provide(Agent.layer({ dir, env: { SLACK_BOT_TOKEN: envSecret, OPENROUTER_API_KEY: "sk-test" } })))

      holdsNoSecret("the reply", outcome.reply)
      expect(outcome.reply).toContain("[redacted:SERVICE_TOKEN]")
      expect(outcome.reply).toContain("[redacted:SLACK_BOT_TOKEN]")
      holdsNoSecret("the events", JSON.stringify(events))
      // The streamed text, joined, is the redacted reply: nothing held back is lost, no prefix of a secret shown.
      const streamed = events.flatMap((e) => (e.type === "text-delta" ? [e.delta] : [])).join("")
      expect(streamed).toBe(`Reading with [redacted:SLACK_BOT_TOKEN] now.${outcome.reply}`)
      for (const event of events) {
        if (event.type !== "text-delta") continue
        for (const secret of secrets) expect(secret.startsWith(event.delta.slice(-6)) && event.delta.length >= 6).toBe(false)
      }
      for (const file of sessionFiles(dir)) holdsNoSecret("the session file", file)
      expect(sessionFiles(dir).join("")).toContain("[redacted:SERVICE_TOKEN]")
      for (const request of yield* server.requests) holdsNoSecret(`the ${request.path} request`, JSON.stringify(request.body))
    })))

  it.live("a session written before redaction: recall's tables, the embeddings requests and search results hold none", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = makeAgentDir()
      const sid = "20260101-100000-000-aaaa"
      appendLines(
        sessionPath(dir, sid),
        header(sid),
        user(`deploy with ${dotenvSecret} please`),
        callTool("c1", "bash", { command: `curl -H "Authorization: ${envSecret}" deploy.example` }),
        toolResult("c1", "bash", `deployed using ${dotenvSecret}`),
        answer(`deploy done; the token ${envSecret} still works`)
      )
      NodeFs.mkdirSync(NodePath.join(dir, "knowledge"), { recursive: true })
      NodeFs.writeFileSync(NodePath.join(dir, "knowledge", "deploy.md"), `# Deploy\nThe deploy token is ${dotenvSecret}.\n`)
      const loaded = {
        ...loadedAt(dir, { provider: "ollama", model: "m", embeddingModel: "fake-embed", baseURL: server.baseURL }, {
          SERVICE_TOKEN: dotenvSecret,
          SLACK_BOT_TOKEN: envSecret
        }),
        secretKeys: ["SERVICE_TOKEN"]
      }
      const layer = RecallLayers.layer.pipe(
        Layer.provideMerge(Layer.mergeAll(
          Layer.succeed(AgentConfig, loaded),
          KnownSecrets.layerOf(loaded),
          Database.layer({ filename: loaded.paths.dbFile }),
          NodeContext.layer
        ))
      )
      const hits = yield* Effect.gen(function*() {
        const recall = yield* Recall
        yield* recall.sync
        return yield* recall.search({ query: "deploy token" })
      }).pipe(Effect.provide(layer))
      expect(hits.hits.length).toBeGreaterThan(0)
      holdsNoSecret("the search results", JSON.stringify(hits))
      expect(JSON.stringify(hits)).toContain("[redacted:")
      const embeddings = (yield* server.requests).filter((r) => r.path === "/embeddings")
      expect(embeddings.length).toBeGreaterThan(0)
      for (const request of embeddings) holdsNoSecret("an embeddings request", JSON.stringify(request.body))
      for (const file of ["kern.db", "kern.db-wal"]) {
        const path = NodePath.join(dir, ".kern", file)
        if (NodeFs.existsSync(path)) holdsNoSecret(file, NodeFs.readFileSync(path).toString("latin1"))
      }
    })))
})
