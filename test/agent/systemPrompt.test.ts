import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, LogLevel } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { buildSystemPrompt, memoryItems } from "../../src/agent/systemPrompt.js"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import * as NotesSummary from "../../src/memory/NotesSummary.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const promptFor = (dir: string) => {
  const logs: Array<string> = []
  const logger = Logger.make(({ message }) => logs.push(String(message)))
  return buildSystemPrompt.pipe(
    Effect.provide(NotesSummary.layerNone),
    Effect.provide(AgentConfig.layer(dir)),
    Effect.provideService(ProcessEnv, {}),
    Effect.provide(NodeContext.layer),
    Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
    Logger.withMinimumLogLevel(LogLevel.Warning),
    Effect.map((prompt) => ({ prompt, logs }))
  )
}

describe("buildSystemPrompt", () => {
  it.effect("includes the memory files and the latest note; a missing file is left out silently", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      writeFiles(dir, {
        ".kern/config.json": "{}",
        "AGENTS.md": "# rules",
        "notes/2026-11-01.md": "the previous day",
        "notes/2026-11-02.md": "newest",
        "notes/scratch.md": "not a dated note"
      })
      const { logs, prompt } = yield* promptFor(dir)
      assert.include(prompt, "<file name=\"AGENTS.md\">\n# rules\n</file>")
      assert.include(prompt, "notes/2026-11-02.md")
      assert.notInclude(prompt, "the previous day")
      assert.notInclude(prompt, "IDENTITY.md")
      assert.deepStrictEqual(logs, [])
    }))

  it.effect("a memory file that cannot be read is left out with a warning naming it, not silently", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      writeFiles(dir, { ".kern/config.json": "{}", "AGENTS.md": "# rules" })
      NodeFs.mkdirSync(NodePath.join(dir, "IDENTITY.md"))
      const { logs, prompt } = yield* promptFor(dir)
      assert.include(prompt, "# rules")
      assert.strictEqual(logs.length, 1)
      assert.include(logs[0], NodePath.join(dir, "IDENTITY.md"))
    }))
})

describe("memoryItems", () => {
  it.effect("typed items with their source, in order: AGENTS, IDENTITY, KERN, KNOWLEDGE, USERS, the latest note", () =>
    Effect.gen(function*() {
      const dir = makeTempDir()
      writeFiles(dir, {
        ".kern/config.json": "{}",
        "USERS.md": "users",
        "KERN.md": "kern",
        "AGENTS.md": "agents",
        "KNOWLEDGE.md": "index",
        "IDENTITY.md": "identity",
        "notes/2026-11-01.md": "older",
        "notes/2026-11-02.md": "newest",
        "notes/2026-11-31.md": "not a date"
      })
      const items = yield* memoryItems.pipe(
        Effect.provide(NotesSummary.layerNone),
        Effect.provide(AgentConfig.layer(dir)),
        Effect.provideService(ProcessEnv, {}),
        Effect.provide(NodeContext.layer)
      )
      assert.deepStrictEqual(items.map((item) => [item.kind, item.source, item.text]), [
        ["file", "AGENTS.md", "agents"],
        ["file", "IDENTITY.md", "identity"],
        ["file", "KERN.md", "kern"],
        ["file", "KNOWLEDGE.md", "index"],
        ["file", "USERS.md", "users"],
        ["latest-note", "notes/2026-11-02.md", "newest"]
      ])
    }))
})
