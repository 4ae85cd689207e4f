import * as MediaStore from "../../src/media/MediaStore.js"
import * as Transcriber from "../../src/media/Transcriber.js"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { MessageQueue } from "../../src/turn/MessageQueue.js"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import * as EventLog from "../../src/kernel/EventLog.js"
import * as Kernel from "../../src/kernel/Kernel.js"
import { ToolExecutor } from "../../src/kernel/ToolExecutor.js"
import * as Database from "../../src/storage/Database.js"
import * as Builtins from "../../src/tools/builtins.js"
import * as RecallLayers from "../../src/recall/layers.js"
import { Recall } from "../../src/recall/Recall.js"
import * as Channels from "../../src/tools/Channels.js"
import { ScheduleStore } from "../../src/tools/schedules/ScheduleStore.js"
import { kern, kernPair } from "../../src/tools/kern.js"
import { PairingStore } from "../../src/users/PairingStore.js"
import { isSecretKey, isSecretVariable } from "../../src/config/secretNames.js"
import { maskSecretFields, maskValue } from "../../src/tools/redact.js"
import * as RuntimeInfo from "../../src/tools/RuntimeInfo.js"
import * as ToolServices from "../../src/tools/ToolServices.js"
import { inRun } from "../kernel/harness.js"
import { makeTempDir, writeFiles } from "./support.js"

const apiKey = "sk-or-v1-0123456789abcdefwxyz"
const hookSecret = "hook-secret-value-77"
const authToken = "kern-auth-token-value-0000"

/** An agent folder whose `.env` holds secrets, one of which also leaks into the config's baseURL. */
const agentFolder = (files: Record<string, string> = {}) => {
  const dir = NodePath.join(makeTempDir("kern-tool-"), "atlas")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({
      provider: "openrouter",
      model: "test/model",
      baseURL: `https://proxy.example/v1?hook=${hookSecret}`
    }),
    ".kern/.env": `OPENROUTER_API_KEY=${apiKey}\nCUSTOM_HOOK=${hookSecret}\n`,
    "USERS.md": "# USERS.md\n\n- alice: telegram 42, the operator\n",
    ...files
  })
  return dir
}

const shellToken = "ghp_operatorshelltoken0123"
const processEnv = {
  PATH: "/usr/bin",
  HOME: "/home/kern",
  PWD: "/home/kern/agents",
  KERN_AUTH_TOKEN: authToken,
  KERN_NAME: "atlas",
  GITHUB_TOKEN: shellToken
}

/** Config from the folder, an in-memory kern.db with its SQL event log, the platform and `runtimeInfo`. */
const layerFor = (dir: string, runtimeInfo: Layer.Layer<RuntimeInfo.RuntimeInfo, never, MessageQueue> = RuntimeInfo.layer) => {
  const platform = Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, processEnv))
  const config = AgentConfig.layer(dir).pipe(Layer.provide(platform))
  const log = Layer.mergeAll(EventLog.layerSql.pipe(Layer.provide(KnownSecrets.layerNone)), PairingStore.Default, ScheduleStore.Default).pipe(Layer.provideMerge(Database.layerMemory))
  const info = runtimeInfo.pipe(Layer.provideMerge(MessageQueue.Default))
  const recall = RecallLayers.layer.pipe(Layer.provide(Layer.mergeAll(config, log, platform, KnownSecrets.layer.pipe(Layer.provide(config)))))
  return Layer.mergeAll(config, log, info, platform, recall, Channels.layer).pipe(Layer.orDie)
}

const recordEvent = (input: Partial<EventLog.EventInput> & Pick<EventLog.EventInput, "decisionKey" | "status">) =>
  Effect.flatMap(EventLog.EventLog, (log) => log.record({ runId: "run_a", traceId: "t", ...input }))

describe("kern tool: status", () => {
  it.effect("YAML with version, agent, provider, model, uptime, live session and queue figures, usage totals", () => {
    const dir = agentFolder()
    const messages = [{ role: "user", text: "hello" }, { role: "assistant", text: "hi" }]
    // The figures a session writer keeps: the message count and the bytes of its lines.
    const figures = {
      id: "20260101-000000-abcdef",
      messages: messages.length,
      bytes: messages.reduce((sum, message) => sum + Buffer.byteLength(JSON.stringify(message)), 0)
    }
    // The context of the last model call, as the running agent reports it from its ContextWindow.
    const context = { maxContextTokens: 100_000, system: 3_100, tools: 2_400, summary: 9_000, raw: 15_500, total: 30_000, cut: 1_200, messages: 1_260, summaries: 7 }
    const live = RuntimeInfo.layerWith(Effect.map(MessageQueue, (queue) => ({
      queueLength: queue.size,
      session: Effect.succeed(Option.some(figures)),
      context: Effect.succeed(Option.some(context))
    })))
    return Effect.gen(function*() {
      const queue = yield* MessageQueue
      yield* queue.offer({ interface: "web", channel: "web:1", userId: "u1", text: "one" })
      yield* queue.offer({ interface: "web", channel: "web:1", userId: "u1", text: "two" })
      yield* recordEvent({
        decisionKey: "kernel.run.finished",
        status: "ok",
        detail: JSON.stringify({ kind: "turn", usage: { inputTokens: 100, outputTokens: 20, cachedInputTokens: 10, costUsdCents: 0.5 } })
      })
      yield* TestClock.adjust("90 minutes")
      const out = yield* inRun(kern({ action: "status" }))
      const lines = out.text.split("\n")
      for (
        const line of [
          "version: 0.1.0",
          "agent: atlas",
          "provider: openrouter",
          "model: test/model",
          "uptime: 1h 30m 0s",
          "uptimeMs: 5400000",
          "session:",
          "  id: 20260101-000000-abcdef",
          "  messages: 2",
          "context:",
          "  tokens: 30000 of 100000 (system 3100, tools 2400, summaries 9000, raw messages 15500)",
          "  window: messages 1200-1259 raw, 0-1199 stand as 7 summaries (recall loads them whole)",
          "  maxContextTokens: 100000",
          "queue: 2",
          "usage:",
          "  turns: 1",
          "  inputTokens: 100",
          "  costUsdCents: 0.5"
        ]
      ) expect(lines).toContain(line)
      const bytes = Buffer.byteLength(JSON.stringify({ role: "user", text: "hello" })) +
        Buffer.byteLength(JSON.stringify({ role: "assistant", text: "hi" }))
      expect(lines).toContain(`  bytes: ${bytes}`)
      expect(out.text).not.toContain(apiKey)
    }).pipe(Effect.provide(layerFor(dir, live)))
  })

  it.effect("outside the agent loop: no session, queue not available, no turns yet", () =>
    Effect.gen(function*() {
      const out = yield* inRun(kern({ action: "status" }))
      const lines = out.text.split("\n")
      expect(lines).toContain("uptime: 0s")
      expect(lines).toContain("session: none (no conversation is open in this process)")
      expect(lines).toContain("context: no model call yet in this process (maxContextTokens 100000)")
      expect(lines).toContain("queue: not available")
      expect(lines).toContain("  turns: 0")
    }).pipe(Effect.provide(layerFor(agentFolder()))))

  it.live("the recall index: messages, chunks, sessions, date range and the embeddings (keyword-only and why)", () => {
    const dir = agentFolder({
      ".kern/config.json": JSON.stringify({ provider: "openrouter", model: "test/model", embeddingModel: false }),
      ".kern/sessions/20260105-090000-000-aaaa.jsonl": [
        { _tag: "session", version: 1, id: "20260105-090000-000-aaaa", createdAt: "2026-01-05T09:00:00.000Z", agent: "atlas" },
        { _tag: "user", text: "where is the spare key?", at: "2026-01-05T09:00:00.000Z" },
        { _tag: "assistant", text: "under the blue flowerpot", toolCalls: [], at: "2026-01-07T09:00:01.000Z" }
      ].map((line) => `${JSON.stringify(line)}\n`).join("")
    })
    return Effect.gen(function*() {
      yield* Effect.flatMap(Recall, (recall) => recall.sync)
      const lines = (yield* inRun(kern({ action: "status" }))).text.split("\n")
      expect(lines).toContain("recall:")
      expect(lines).toContain("  index: 2 messages in 1 chunk from 1 session, 0 files, 2026-01-05 to 2026-01-07")
      expect(lines).toContain("  embeddings: keyword-only (embeddingModel is false)")
    }).pipe(Effect.provide(layerFor(dir)))
  })
})

describe("kern tool: config and env", () => {
  it.effect("config is the effective config as JSON, fields named like secrets masked", () =>
    Effect.gen(function*() {
      const out = yield* inRun(kern({ action: "config" }))
      const config = JSON.parse(out.text) as Record<string, unknown>
      expect(config).toMatchObject({ name: "atlas", provider: "openrouter", model: "test/model", toolScope: "full" })
      expect(config["budget"]).toMatchObject({ maxToolCalls: 200, maxPromptTokens: 3_000_000 })
    }).pipe(Effect.provide(layerFor(agentFolder()))))

  it.effect("through the executor no known secret appears in any action, not even inside another value: the one redactor's marker stands for it", () =>
    Effect.gen(function*() {
      // The secrets reach the kernel event log as an error message would carry them.
      yield* recordEvent({ decisionKey: "kernel.tool.dispatch", status: "error", errorCode: "UNEXPECTED", errorMessage: `401 for ${apiKey} and ${shellToken}` })
      const executor = yield* ToolExecutor
      for (const action of ["status", "config", "env", "users", "logs"] as const) {
        const result = yield* inRun(executor.execute("kern", { action, limit: 200 }))
        assert.isTrue(result.success, result.errorMessage)
        const shown = JSON.stringify(result)
        for (const secret of [apiKey, hookSecret, authToken, shellToken]) expect(shown, action).not.toContain(secret)
        if (action === "config") {
          const config = JSON.parse((result.data as { text: string }).text) as Record<string, unknown>
          expect(config["baseURL"]).toBe("https://proxy.example/v1?hook=[redacted:CUSTOM_HOOK]")
        }
        if (action === "logs") {
          expect((result.data as { text: string }).text).toContain("401 for [redacted:OPENROUTER_API_KEY] and [redacted:GITHUB_TOKEN]")
        }
      }
    }).pipe(Effect.provide(registeredTools(agentFolder(), { safetyMode: "NORMAL" }))))

  it.effect("env lists .env, provider and KERN_* variable names with masked values, nothing else", () =>
    Effect.gen(function*() {
      const out = yield* inRun(kern({ action: "env" }))
      expect(out.text.split("\n")).toEqual([
        "CUSTOM_HOOK=…e-77 (.kern/.env)",
        "KERN_AUTH_TOKEN=…0000 (environment)",
        "KERN_NAME=**** (environment)",
        "OPENROUTER_API_KEY=sk-…wxyz (.kern/.env)"
      ])
      for (const secret of [apiKey, hookSecret, authToken]) expect(out.text).not.toContain(secret)
      expect(out.text).not.toContain("PATH")
    }).pipe(Effect.provide(layerFor(agentFolder()))))

  it("redaction: secret-looking keys at any depth; token counts and env-variable names are kept", () => {
    expect(["apiKey", "api_key", "SLACK_BOT_TOKEN", "authToken", "dbPassword", "clientSecret"].map(isSecretKey))
      .toEqual([true, true, true, true, true, true])
    expect(["maxPromptTokens", "apiKeyEnv", "keyboard", "model", "tokenizer"].map(isSecretKey))
      .toEqual([false, false, false, false, false])
    expect(["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "PWD", "OLDPWD", "HOME"].map(isSecretVariable))
      .toEqual([true, true, false, false, false])
    expect(maskSecretFields({ a: { password: "p", list: [{ token: "t" }] }, maxPromptTokens: 5, note: "kept" }))
      .toEqual({ a: { password: "****", list: [{ token: "****" }] }, maxPromptTokens: 5, note: "kept" })
    expect(maskValue("short")).toBe("****")
    expect(maskValue("sk-ant-api03-abcdefghijkl")).toBe("sk-…ijkl")
  })
})

describe("kern tool: logs and users", () => {
  it.effect("logs: the last N kernel events, oldest first, one per line; limit defaults to 20", () =>
    Effect.gen(function*() {
      for (let i = 1; i <= 25; i++) {
        yield* recordEvent({ decisionKey: "kernel.tool.dispatch", status: "ok", toolId: `tool.n${i}`, latencyMs: i })
      }
      yield* recordEvent({
        decisionKey: "kernel.tool.dispatch",
        status: "error",
        toolId: "bash",
        errorCode: "TIMEOUT",
        errorMessage: "bash timed out"
      })
      const two = yield* inRun(kern({ action: "logs", limit: 2 }))
      const lines = two.text.split("\n")
      expect(lines).toHaveLength(2)
      expect(lines[0]).toMatch(/^1970-01-01T00:00:00\.000Z kernel\.tool\.dispatch ok tool\.n25 run=run_a 25ms$/)
      expect(lines[1]).toContain("kernel.tool.dispatch error bash run=run_a TIMEOUT: bash timed out")
      const all = yield* inRun(kern({ action: "logs" }))
      expect(all.action === "logs" ? all.events : -1).toBe(20)
      expect(all.text.split("\n")[0]).toContain("tool.n7 ")
    }).pipe(Effect.provide(layerFor(agentFolder()))))

  it.effect("users: USERS.md and a line saying no channel user has paired yet", () =>
    Effect.gen(function*() {
      const out = yield* inRun(kern({ action: "users" }))
      expect(out.text).toContain("- alice: telegram 42, the operator")
      expect(out.text).toContain("No channel users have paired or asked to pair.")
    }).pipe(Effect.provide(layerFor(agentFolder()))))

  it.effect("users without a USERS.md says so", () => {
    const dir = agentFolder()
    NodeFs.rmSync(NodePath.join(dir, "USERS.md"))
    return Effect.gen(function*() {
      const out = yield* inRun(kern({ action: "users" }))
      expect(out.text).toContain("USERS.md does not exist")
    }).pipe(Effect.provide(layerFor(dir)))
  })
})

/** The built-ins registered the way the agent does it, over a kernel on one kern.db. */
const registeredTools = (dir: string, options: Partial<Kernel.KernelOptions> = {}) => {
  const platform = Layer.mergeAll(NodeContext.layer, Layer.succeed(ProcessEnv, processEnv))
  const config = AgentConfig.layer(dir).pipe(Layer.provideMerge(platform))
  const db = Database.layerMemory.pipe(Layer.provideMerge(config))
  const kernel = Kernel.layer({ safetyMode: "SAFE", approvalMode: "deny", contractEnforcement: "enforce", ...options }).pipe(
    Layer.provideMerge(KnownSecrets.layer),
    Layer.provideMerge(db)
  )
  const tools = Layer.mergeAll(ToolServices.layer, PairingStore.Default, RecallLayers.layer, Channels.layer, ScheduleStore.Default, MediaStore.layer.pipe(Layer.provide(Transcriber.layerOff("no transcription in this test")))).pipe(Layer.provideMerge(kernel))
  return Builtins.layer.pipe(Layer.provideMerge(tools), Layer.orDie)
}

describe("kern tool: registered with the built-ins", () => {
  it.effect("runs through the executor even in SAFE mode (READ_ONLY) and decodes its arguments", () =>
    Effect.gen(function*() {
      const executor = yield* ToolExecutor
      const env = yield* inRun(executor.execute("kern", { action: "env" }))
      assert.isTrue(env.success, env.errorMessage)
      expect(JSON.stringify(env.data)).not.toContain(apiKey)
      const pair = yield* inRun(executor.execute("kern", { action: "pair" }))
      expect(pair.errorCode).toBe("VALIDATION_ERROR")
      // Seed 000's form points to the tool that pairs, with or without the code, and never echoes a code back.
      expect(pair.errorMessage).toContain("call kern_pair({ \"code\": \"KERN-XXXX\" })")
      const seedForm = yield* inRun(executor.execute("kern", { action: "pair", code: "KERN-7QX4" }))
      expect(seedForm.errorCode).toBe("VALIDATION_ERROR")
      expect(seedForm.errorMessage).toContain("kern_pair")
      expect(seedForm.errorMessage).not.toContain("7QX4")
      const unknown = yield* inRun(executor.execute("kern", { action: "restart" }))
      expect(unknown.errorMessage).toContain("got \"restart\"")
      const tooMany = yield* inRun(executor.execute("kern", { action: "logs", limit: 500 }))
      expect(tooMany.errorCode).toBe("VALIDATION_ERROR")
      const logs = yield* inRun(executor.execute("kern", { action: "logs", limit: 5 }))
      assert.isTrue(logs.success, logs.errorMessage)
      expect((logs.data as { text: string }).text).toContain("kernel.tool.dispatch")
    }).pipe(Effect.provide(registeredTools(agentFolder()))))
})

describe("kern tool: pending pairing codes never reach the model", () => {
  /** Every way a code could surface: the pairing table, USERS.md as the operator wrote it, the event log. */
  const seeded = Effect.gen(function*() {
    const store = yield* PairingStore
    const pending = yield* Effect.forEach(["42", "43", "44"], (userId) =>
      store.request({ interface: userId === "44" ? "slack" : "telegram", userId, chatId: userId, displayName: `user ${userId}` }))
    const codes = pending.map((p) => p.code)
    const [first = "", second = "", third = ""] = codes
    yield* recordEvent({ decisionKey: "kernel.tool.dispatch", status: "error", toolId: "kern_pair", errorCode: "NOT_FOUND", errorMessage: `code ${first} expired` })
    yield* recordEvent({
      decisionKey: "kernel.tool.policy.blocked",
      status: "error",
      toolId: `tool_${third.toLowerCase()}`,
      errorCode: "PERMISSION_DENIED",
      errorMessage: `pair ${second.toLowerCase()}`
    })
    return codes
  })
  const usersFile = (dir: string, codes: ReadonlyArray<string>) =>
    NodeFs.writeFileSync(
      NodePath.join(dir, "USERS.md"),
      `# USERS.md\n\n- bob waits with ${codes[0]}, carol with ${(codes[1] ?? "").toLowerCase()}, ` +
        `dave with ${(codes[2] ?? "").replace("KERN", "Kern")}; an example code: KERN-7QX4\n`
    )
  const leaks = (codes: ReadonlyArray<string>, output: unknown) => {
    const text = JSON.stringify(output).toUpperCase()
    return [...codes, "KERN-7QX4"].filter((code) => text.includes(code))
  }

  it.effect("no action, called directly, shows a code in any case or field", () => {
    const dir = agentFolder()
    return Effect.gen(function*() {
      const codes = yield* seeded
      usersFile(dir, codes)
      for (const action of ["status", "config", "env", "users", "logs"] as const) {
        const out = yield* inRun(kern({ action, limit: 50 }))
        expect(leaks(codes, out), action).toEqual([])
      }
      const listed = yield* inRun(kern({ action: "users" }))
      expect(listed.text).toContain("telegram:42 (user 42): pending (its code is not shown here")
      expect(listed.text).toContain("bob waits with KERN-····")
    }).pipe(Effect.provide(layerFor(dir)))
  })

  it.effect("through the executor, for every action and every run scope, in NORMAL and SAFE runs", () => {
    const dir = agentFolder()
    return Effect.gen(function*() {
      const codes = yield* seeded
      usersFile(dir, codes)
      const executor = yield* ToolExecutor
      for (const toolScope of ["read", "write", "full"] as const) {
        for (const safetyMode of ["NORMAL", "SAFE"] as const) {
          for (const action of ["status", "config", "env", "users", "logs"] as const) {
            const result = yield* inRun(executor.execute("kern", { action, limit: 200 }), { toolScope, safetyMode, userSid: "telegram:43" })
            assert.isTrue(result.success, result.errorMessage)
            expect(leaks(codes, result), `${action} ${toolScope} ${safetyMode}`).toEqual([])
          }
        }
      }
    }).pipe(Effect.provide(registeredTools(dir)))
  })
})

describe("kern_pair: approving a pairing is a write, governed as one", () => {
  it.effect("approves a pending code (case-insensitive), once; unknown and malformed codes are refused", () => {
    const dir = agentFolder()
    return Effect.gen(function*() {
      const store = yield* PairingStore
      const pending = yield* store.request({ interface: "telegram", userId: "42", chatId: "42", displayName: "Alice" })
      expect(pending.code).toMatch(/^KERN-[A-HJ-NP-Z2-9]{4}$/)
      const listed = yield* inRun(kern({ action: "users" }))
      expect(listed.text).toContain("telegram:42 (Alice): pending (its code is not shown here")
      expect(listed.text).not.toContain(pending.code)

      const approved = yield* inRun(kernPair({ code: pending.code.toLowerCase() }), { userSid: "operator" })
      expect(approved.text).toBe("Approved telegram user 42 (Alice).")
      expect(yield* store.isApproved("telegram", "42")).toBe(true)
      const again = yield* inRun(kernPair({ code: pending.code }))
      expect(again.text).toContain("already approved")
      expect((yield* store.list)[0]).toMatchObject({ status: "approved", approvedBy: "agent:operator" })
      expect((yield* inRun(kern({ action: "users" }))).text).toContain("telegram:42 (Alice): approved, user, tool scope read")
      // The approval is mirrored into USERS.md's generated section; what was written by hand above it stays.
      const usersMd = NodeFs.readFileSync(NodePath.join(dir, "USERS.md"), "utf8")
      expect(usersMd).toMatch(/^# USERS.md\n\n- alice: telegram 42, the operator\n/)
      expect(usersMd).toContain("| Alice | telegram | telegram:42 | user | read |")

      const unknown = yield* Effect.flip(inRun(kernPair({ code: "KERN-ZZZZ" })))
      expect(unknown.code).toBe("NOT_FOUND")
      const malformed = yield* Effect.flip(inRun(kernPair({ code: "hello" })))
      expect(malformed.code).toBe("VALIDATION_ERROR")
      const same = yield* store.request({ interface: "telegram", userId: "42", chatId: "42" })
      expect(same.code).toBe(pending.code)
    }).pipe(Effect.provide(layerFor(dir)))
  })

  /** The built-ins of an agent whose config says `config`, over a kernel with `options`, and a pending pairing. */
  const governed = (config: Record<string, unknown>, options: Partial<Kernel.KernelOptions>) => {
    const dir = agentFolder({
      ".kern/config.json": JSON.stringify({ provider: "openrouter", model: "test/model", ...config })
    })
    const platform = Layer.mergeAll(NodeContext.layer, Layer.succeed(ProcessEnv, processEnv))
    const configLayer = AgentConfig.layer(dir).pipe(Layer.provideMerge(platform))
    const db = Database.layerMemory.pipe(Layer.provideMerge(configLayer))
    const kernel = Kernel.layer({ safetyMode: "NORMAL", approvalMode: "deny", contractEnforcement: "observe", ...options })
      .pipe(Layer.provideMerge(KnownSecrets.layer), Layer.provideMerge(db))
    const tools = Layer.mergeAll(ToolServices.layer, PairingStore.Default, RecallLayers.layer, Channels.layer, ScheduleStore.Default, MediaStore.layer.pipe(Layer.provide(Transcriber.layerOff("no transcription in this test")))).pipe(Layer.provideMerge(kernel))
    return Builtins.layer.pipe(Layer.provideMerge(tools), Layer.orDie)
  }

  /** What a model can do about a pending pairing: read status, try both ways of approving it. */
  const attempt = (safetyMode: "NORMAL" | "SAFE" = "NORMAL") =>
    Effect.gen(function*() {
      const store = yield* PairingStore
      const executor = yield* ToolExecutor
      const { code } = yield* store.request({ interface: "telegram", userId: "42", chatId: "42" })
      const run = (toolId: string, args: unknown) => inRun(executor.execute(toolId, args), { safetyMode })
      const status = yield* run("kern", { action: "status" })
      const viaKern = yield* run("kern", { action: "pair", code })
      const viaPair = yield* run("kern_pair", { code })
      return { status, viaKern, viaPair, approved: yield* store.isApproved("telegram", "42") }
    })

  it.effect("a read-only tool scope: status reads, no way to approve (kern_pair is not offered)", () =>
    Effect.gen(function*() {
      const { approved, status, viaKern, viaPair } = yield* attempt()
      assert.isTrue(status.success, status.errorMessage)
      expect(viaKern.errorCode).toBe("VALIDATION_ERROR")
      expect(viaPair.errorCode).toBe("NOT_FOUND")
      expect(approved).toBe(false)
    }).pipe(Effect.provide(governed({ toolScope: "read" }, {}))))

  it.effect("a SAFE run: status reads, kern_pair is refused by policy", () =>
    Effect.gen(function*() {
      const { approved, status, viaKern, viaPair } = yield* attempt("SAFE")
      assert.isTrue(status.success, status.errorMessage)
      expect(viaKern.errorCode).toBe("VALIDATION_ERROR")
      expect(viaPair.errorCode).toBe("PERMISSION_DENIED")
      expect(viaPair.errorMessage).toContain("SAFE mode allows read-only tools only; kern_pair is LOCAL_WRITE")
      expect(approved).toBe(false)
    }).pipe(Effect.provide(governed({ toolScope: "full" }, {}))))

  it.effect("a SAFE policy (config safetyMode): kern_pair is refused", () =>
    Effect.gen(function*() {
      const { approved, status, viaPair } = yield* attempt()
      assert.isTrue(status.success, status.errorMessage)
      expect(viaPair.errorCode).toBe("PERMISSION_DENIED")
      expect(approved).toBe(false)
    }).pipe(Effect.provide(governed({ toolScope: "full" }, { safetyMode: "SAFE" }))))

  it.effect("a write scope in a NORMAL run: kern_pair approves", () =>
    Effect.gen(function*() {
      const { approved, viaPair } = yield* attempt()
      assert.isTrue(viaPair.success, viaPair.errorMessage)
      expect(approved).toBe(true)
    }).pipe(Effect.provide(governed({ toolScope: "write" }, {}))))

  it.effect("under enforce with no baseline kern_pair is refused as a new contract; kern status still reads", () =>
    Effect.gen(function*() {
      const { approved, status, viaPair } = yield* attempt()
      assert.isTrue(status.success, status.errorMessage)
      expect(viaPair.errorCode).toBe("PERMISSION_DENIED")
      expect(viaPair.errorMessage).toContain("kern runtime-guard snapshot")
      expect(approved).toBe(false)
    }).pipe(Effect.provide(governed({ toolScope: "write" }, { contractEnforcement: "enforce" }))))
})
