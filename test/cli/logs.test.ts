import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Fiber, Layer, PubSub, Queue, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Approvals, localOperator } from "../../src/runtime/Approvals.js"
import { jsonLineLogging } from "../../src/cli/fileLogger.js"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { LogRecord, readLines } from "../../src/cli/logRecord.js"
import { loadConfig } from "../../src/config/AgentConfig.js"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { runKernIn } from "../support/inProcessCli.js"
import { operatorTurn } from "../support/operatorTurn.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const secret = "sk-live-0123456789abcdef-SECRET"
const env = { OPENAI_API_KEY: secret }

const agentFolder = (baseURL: string) => {
  const dir = NodePath.join(makeTempDir(), "agent")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({
      provider: "openai",
      model: "test-model",
      baseURL,
      approvalMode: "ask",
      embeddingModel: false,
      recall: false,
      heartbeatInterval: 0
    })
  })
  return dir
}

/** The folder's log as the background agent writes it: JSON lines through its one logger, its secrets redacted. */
const logTo = (dir: string) =>
  Layer.unwrapEffect(Effect.map(loadConfig(dir), (loaded) => {
    const file = NodePath.join(loaded.paths.logsDir, "kern.log")
    NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
    return jsonLineLogging(KnownSecrets.fromConfig(loaded).secrets, (line) => NodeFs.appendFileSync(file, line))
  })).pipe(Layer.provide(Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, env))))

const logFile = (dir: string) => NodePath.join(dir, ".kern/logs/kern.log")
const records = (dir: string) => readLines(NodeFs.readFileSync(logFile(dir), "utf8").trim().split("\n")).lines.map((line) => line.record)

const runtime = (dir: string) =>
  agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 }).pipe(
    Layer.provide(Layer.succeed(ProcessEnv, env)),
    Layer.provide(NodeContext.layer)
  )

describe("the background agent's log", () => {
  it.live("a turn with a provider 429, an approval and tool calls logs each step, annotated with its turn, session, channel and user", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = agentFolder(server.baseURL)
      yield* server.reply(
        FakeReply.error(429),
        FakeReply.toolCalls([
          { id: "c1", name: "bash", args: { command: "echo hi" } },
          { id: "c2", name: "grep", args: { pattern: secret, path: "." } }
        ]),
        FakeReply.text("done")
      )
      const turn = Effect.gen(function*() {
        const approvals = yield* Approvals
        const asked = yield* PubSub.subscribe(approvals.requests)
        const fiber = yield* Effect.fork(operatorTurn("check the folder"))
        const pending = yield* Queue.take(asked)
        yield* approvals.decide(pending.id, true, localOperator("test"))
        return yield* Fiber.join(fiber)
      })
      const done = yield* Effect.scoped(turn).pipe(Effect.provide(runtime(dir)), Effect.provide(logTo(dir)))
      expect(done.outcome.failure).toBeUndefined()

      const text = NodeFs.readFileSync(logFile(dir), "utf8")
      // The secret the model put in a tool's arguments is in the log only as its marker.
      expect(text).not.toContain(secret)
      const all = records(dir)
      const where = { session: done.sessionId, channel: "cli:terminal", user: "operator" }
      const started = all.find((r) => r.message.startsWith("turn started"))
      expect(started?.level).toBe("INFO")
      expect(started?.annotations).toMatchObject(where)
      const turnId = started?.annotations["turn"]
      expect(typeof turnId).toBe("string")
      const inTurn = { ...where, turn: turnId }

      // An info line: the people waiting on the turn were told (its retry event); `kern logs` shows it by default.
      const retry = all.find((r) => r.message.includes("retrying in"))
      expect(retry?.level).toBe("INFO")
      expect(retry?.annotations).toMatchObject({ ...inTurn, provider: "rate_limit", status: 429 })
      expect(retry?.annotations["waitMs"]).toBeGreaterThanOrEqual(500)

      const asked = all.find((r) => r.message.includes("asked: bash"))
      expect(asked?.annotations).toMatchObject({ ...inTurn, tool: "bash" })
      const answered = all.find((r) => r.annotations["outcome"] === "approved")
      expect(answered?.message).toMatch(/approval apr_\w+ approved by operator/)
      expect(answered?.annotations).toMatchObject({ ...inTurn, tool: "bash", by: "operator", approval: asked?.annotations["approval"] })

      const bash = all.find((r) => r.annotations["tool"] === "bash" && r.message.startsWith("tool bash"))
      expect(bash?.level).toBe("DEBUG")
      expect(bash?.annotations).toMatchObject({ ...inTurn, outcome: "ok", approvedBy: "operator" })
      expect(typeof bash?.annotations["durationMs"]).toBe("number")
      const grep = all.find((r) => r.message.startsWith("tool grep"))
      expect(grep?.annotations).toMatchObject({ ...inTurn, outcome: "ok" })
      expect(grep?.annotations["args"]).toContain("[redacted:OPENAI_API_KEY]")

      expect(all.filter((r) => r.message.startsWith("model step")).map((r) => r.level)).toEqual(["DEBUG", "DEBUG"])
      const ended = all.find((r) => r.message.startsWith("turn ended"))
      expect(ended?.level).toBe("INFO")
      expect(ended?.annotations).toMatchObject({ ...inTurn, outcome: "ok", steps: 2, inputTokens: 24, outputTokens: 14 })
      expect(typeof ended?.annotations["durationMs"]).toBe("number")
      expect(typeof ended?.annotations["costUsdCents"]).toBe("number")
      expect(typeof ended?.spans["inTurn"]).toBe("number")
    })), 120_000)

  it.live("no known secret reaches the log file: not in a message, an annotation at any depth, a cause or an error", () =>
    Effect.gen(function*() {
      const dir = agentFolder("http://127.0.0.1:9/v1")
      const escaped = `quote"${secret}"\\`
      yield* Effect.gen(function*() {
        yield* Effect.logInfo(`the key is ${secret}`)
        yield* Effect.logWarning("an error", new Error(`failed with ${secret}`))
        yield* Effect.logInfo("nested").pipe(Effect.annotateLogs({ args: { headers: [{ authorization: `Bearer ${secret}` }], [secret]: 1 } }))
        yield* Effect.logInfo("plain annotation").pipe(Effect.annotateLogs("key", secret))
        yield* Effect.logInfo("escaped").pipe(Effect.annotateLogs("json", escaped))
        yield* Effect.logError("a failure", Cause.fail(`boom ${secret}`))
        yield* Effect.logError("a defect").pipe(Effect.annotateLogs("long", `${"x".repeat(295)}${secret}`))
        yield* Effect.logInfo("parts", `and ${secret}`, { nested: secret })
      }).pipe(Effect.provide(logTo(dir)))
      const text = NodeFs.readFileSync(logFile(dir), "utf8")
      expect(text).not.toContain(secret)
      expect(text).not.toContain(JSON.stringify(secret).slice(1, -1))
      // Cut after redaction: no prefix of the secret is left where a long value was cut.
      expect(text).not.toContain(secret.slice(0, 8))
      const all = records(dir)
      expect(all).toHaveLength(8)
      expect(all.filter((r) => JSON.stringify(r).includes("[redacted:OPENAI_API_KEY]"))).toHaveLength(7)
    }))

  it.live("kern logs renders the records as text at info and above; --level debug adds the chatty ones; --json prints records that decode", () =>
    Effect.gen(function*() {
      const dir = agentFolder("http://127.0.0.1:9/v1")
      NodeFs.mkdirSync(NodePath.dirname(logFile(dir)), { recursive: true })
      // A kern from before JSON lines, and a stack trace that is no log line of its own.
      NodeFs.writeFileSync(logFile(dir), "2026-01-01T00:00:00.000Z INFO serving http://127.0.0.1:1 (pid 1)\n    at old (file.js:1)\n")
      yield* Effect.gen(function*() {
        yield* Effect.logInfo("turn ended in 12 ms").pipe(Effect.annotateLogs({ turn: "q1-1", channel: "telegram:42" }))
        yield* Effect.logDebug("tool read ok in 3 ms").pipe(Effect.annotateLogs({ tool: "read", durationMs: 3 }), Effect.withLogSpan("inTurn"))
        yield* Effect.logWarning("model provider failed; retrying in 1s")
      }).pipe(Effect.provide(logTo(dir)))

      const text = yield* Effect.promise(() => runKernIn(["logs", dir], { env }))
      expect(text.status, text.stderr).toBe(0)
      const shown = text.stdout.trim().split("\n")
      expect(shown[0]).toBe("2026-01-01T00:00:00.000Z INFO serving http://127.0.0.1:1 (pid 1)")
      expect(shown[1]).toBe("    at old (file.js:1)")
      expect(shown[2]).toMatch(/^\S+Z INFO turn ended in 12 ms turn=q1-1 channel=telegram:42$/)
      expect(shown[3]).toMatch(/^\S+Z WARN model provider failed; retrying in 1s$/)
      expect(shown).toHaveLength(4)

      const debug = yield* Effect.promise(() => runKernIn(["logs", dir, "--level", "debug"], { env }))
      expect(debug.stdout).toMatch(/DEBUG tool read ok in 3 ms tool=read durationMs=3 inTurn=\d+ms/)

      const json = yield* Effect.promise(() => runKernIn(["logs", dir, "--json", "--level", "debug"], { env }))
      expect(json.status, json.stderr).toBe(0)
      const decoded = json.stdout.trim().split("\n").map((line) => Schema.decodeUnknownSync(Schema.parseJson(LogRecord))(line))
      expect(decoded.map((r) => r.level)).toEqual(["INFO", "INFO", "INFO", "DEBUG", "WARN"])
      expect(decoded[0]).toMatchObject({ time: "2026-01-01T00:00:00.000Z", message: "serving http://127.0.0.1:1 (pid 1)", annotations: {} })
      expect(decoded[1]?.time).toBeUndefined()
      expect(decoded[2]?.annotations).toEqual({ turn: "q1-1", channel: "telegram:42" })
      expect(decoded[3]?.spans["inTurn"]).toBeTypeOf("number")
      const warnOnly = yield* Effect.promise(() => runKernIn(["logs", dir, "--json", "--level", "warn"], { env }))
      expect(warnOnly.stdout.trim().split("\n")).toHaveLength(1)
    }))
})
