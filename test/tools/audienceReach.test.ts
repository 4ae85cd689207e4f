import * as MediaStore from "../../src/media/MediaStore.js"
import * as Transcriber from "../../src/media/Transcriber.js"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import type { Audience, MemoryReach } from "../../src/kernel/Audience.js"
import type { ToolResult } from "../../src/kernel/contracts.js"
import * as Kernel from "../../src/kernel/Kernel.js"
import { ToolExecutor } from "../../src/kernel/ToolExecutor.js"
import * as RecallLayers from "../../src/recall/layers.js"
import { sessionIdIn } from "../../src/session/conversationIds.js"
import * as Database from "../../src/storage/Database.js"
import { ArtifactStore } from "../../src/tools/ArtifactStore.js"
import * as Builtins from "../../src/tools/builtins.js"
import * as Channels from "../../src/tools/Channels.js"
import { ScheduleStore } from "../../src/tools/schedules/ScheduleStore.js"
import { ChannelStatus } from "../../src/tools/Channels.js"
import { callTagVariable, folderTagKey } from "../../src/tools/processTag.js"
import * as ToolServices from "../../src/tools/ToolServices.js"
import { PairingStore } from "../../src/users/PairingStore.js"
import { inRun } from "../kernel/harness.js"
import { makeTempDir, writeFiles } from "./support.js"

/** The operator's private text, planted in every kind of operator material. */
const marker = "bank PIN is 4711"
const markerPattern = "4711"
/** What the operator shares on purpose. */
const sharedText = "the shared lunch menu"

const stamp = "20261126-223647-123-ab12"
const operatorSession = sessionIdIn(stamp, "main")
const friendSession = sessionIdIn("20261126-230000-000-cd34", "telegram-555")

const friend = (memory: MemoryReach = "shared"): Audience => ({
  conversationId: "telegram-555",
  interface: "telegram",
  channel: "555",
  userId: "555",
  memory
})

const operator: Audience = { conversationId: "main", interface: "web", channel: "web", userId: "operator", memory: "all" }

/** An agent folder with the operator's marker in a daily note, KNOWLEDGE.md, USERS.md and a file at its root. */
const agentFolder = (options: { readonly shared?: boolean } = {}) => {
  const dir = NodePath.join(NodeFs.realpathSync(makeTempDir("kern-reach-")), "atlas")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({ provider: "openrouter", model: "test/model", recall: false }),
    ".kern/.env": "OPENROUTER_API_KEY=sk-or-v1-0123456789abcdefwxyz\n",
    "notes/2026-11-26.md": `# 2026-11-26\n\n- the operator said: my ${marker}\n`,
    "KNOWLEDGE.md": `# Knowledge\n\n- operator: ${marker}\n`,
    "USERS.md": `# USERS.md\n\n- alice (operator): ${marker}\n`,
    "private.md": `# Private\n\n${marker}\n`,
    "knowledge/bank.ts": `// ${marker}\nexport function bankPin() { return 4711 }\n`
  })
  if (options.shared !== false) {
    writeFiles(dir, { "shared/menu.md": `# Menu\n\n${sharedText}\n` })
    // Links out of shared/: to a folder, to a file, absolute and relative, and one into .kern/.
    NodeFs.symlinkSync("../notes", NodePath.join(dir, "shared", "link-notes"))
    NodeFs.symlinkSync("../KNOWLEDGE.md", NodePath.join(dir, "shared", "link-file.md"))
    NodeFs.symlinkSync(NodePath.join(dir, "private.md"), NodePath.join(dir, "shared", "abs-link.md"))
    NodeFs.symlinkSync("..", NodePath.join(dir, "shared", "up"))
  }
  return dir
}

/** The built-ins registered as the agent registers them, over a kernel on an in-memory kern.db. */
const registered = (dir: string) => {
  const platform = Layer.mergeAll(NodeContext.layer, Layer.succeed(ProcessEnv, { PATH: process.env.PATH ?? "/usr/bin", HOME: "/tmp" }))
  const config = AgentConfig.layer(dir).pipe(Layer.provideMerge(platform))
  const db = Database.layerMemory.pipe(Layer.provideMerge(config))
  const kernel = Kernel.layer({ safetyMode: "NORMAL", approvalMode: "auto", contractEnforcement: "observe" }).pipe(
    Layer.provideMerge(KnownSecrets.layer),
    Layer.provideMerge(db)
  )
  const tools = Layer.mergeAll(ToolServices.layer, PairingStore.Default, RecallLayers.layer, Channels.layer, ScheduleStore.Default, MediaStore.layer.pipe(Layer.provide(Transcriber.layerOff("no transcription in this test")))).pipe(
    Layer.provideMerge(kernel)
  )
  return Builtins.layer.pipe(Layer.provideMerge(tools), Layer.orDie)
}

/** One call through the executor in a run serving `audience` (none: a run outside any conversation). */
const call = (toolId: string, args: unknown, audience?: Audience) =>
  Effect.flatMap(ToolExecutor, (executor) =>
    inRun(executor.execute(toolId, args), {
      sessionId: audience === undefined || audience.conversationId === "main" ? operatorSession : friendSession,
      ...(audience === undefined ? {} : { audience })
    }))

/** The operator's tool output kept as an artifact, and one of the friend's own. */
const plantArtifacts = Effect.gen(function*() {
  const store = yield* ArtifactStore
  const theirs = yield* store.put({ sessionId: operatorSession, toolId: "bash", text: `ls -la\n${marker}\n` })
  const own = yield* store.put({ sessionId: friendSession, toolId: "read", text: `${sharedText}\n` })
  return { theirs: theirs.artifactId, own: own.artifactId }
})

const shown = (result: ToolResult) => JSON.stringify({ data: result.data, error: result.errorMessage ?? "" })

/** Path forms that lead out of shared/ (relative, dotted, absolute, through a link). */
const outsidePaths = (dir: string) => [
  "../notes/2026-11-26.md",
  "./../KNOWLEDGE.md",
  "../USERS.md",
  "shared/../../private.md",
  "../../atlas/private.md",
  NodePath.join(dir, "KNOWLEDGE.md"),
  NodePath.join(dir, "notes", "2026-11-26.md"),
  NodePath.join(dir, "shared", "..", "private.md"),
  "link-notes/2026-11-26.md",
  "link-file.md",
  "abs-link.md",
  "up/private.md",
  "up/notes/2026-11-26.md",
  "..",
  "../notes",
  "link-notes",
  "up",
  dir,
  "/",
  "../.kern/config.json"
]

describe("what a non-operator's tools reach: shared/ only", () => {
  it.live("read, grep, glob, outline, context_for_task by every path form: nothing of the operator's, a refusal naming shared/", () => {
    const dir = agentFolder()
    return Effect.gen(function*() {
      const leaks: Array<string> = []
      const refusedWithoutSharedNamed: Array<string> = []
      const check = (label: string, result: ToolResult, outside: boolean) => {
        if (shown(result).includes(marker)) leaks.push(`${label}: ${shown(result).slice(0, 300)}`)
        if (outside && !(result.errorCode === "PERMISSION_DENIED" && (result.errorMessage ?? "").includes("shared/"))) {
          refusedWithoutSharedNamed.push(`${label}: ${result.success ? "succeeded" : result.errorMessage}`)
        }
      }
      for (const path of outsidePaths(dir)) {
        check(`read ${path}`, yield* call("read", { path }, friend()), true)
        check(`read outline ${path}`, yield* call("read", { path, mode: "outline" }, friend()), true)
        check(`summarize_file_structure ${path}`, yield* call("summarize_file_structure", { path }, friend()), true)
        check(`grep ${path}`, yield* call("grep", { pattern: markerPattern, path }, friend()), true)
        check(`glob ${path}`, yield* call("glob", { pattern: "**/*", path }, friend()), true)
      }
      // What stays inside shared/ answers, with nothing of the operator's.
      for (const path of [".", "./", "notes/2026-11-26.md", "KNOWLEDGE.md", "private.md", "USERS.md"]) {
        check(`read ${path}`, yield* call("read", { path }, friend()), false)
        check(`grep ${path}`, yield* call("grep", { pattern: markerPattern, path }, friend()), false)
      }
      for (const pattern of ["**/*", "notes/*", "*.md", "**/*.ts", "../*", "../**/*.md"]) {
        const result = yield* call("glob", { pattern }, friend())
        check(`glob ${pattern}`, result, false)
        expect(shown(result)).not.toMatch(/KNOWLEDGE|2026-11-26|private\.md|bank\.ts/)
      }
      for (const args of [{ pattern: markerPattern }, { pattern: "PIN", include: "*.md" }, { pattern: ".", path: "." }]) {
        check(`grep ${JSON.stringify(args)}`, yield* call("grep", args, friend()), false)
      }
      for (const task of ["bank PIN 4711", "operator knowledge users notes private", "what did the operator say"]) {
        check(`context_for_task ${task}`, yield* call("context_for_task", { task }, friend()), false)
      }
      expect(leaks).toEqual([])
      expect(refusedWithoutSharedNamed).toEqual([])
      // Relative paths start in shared/, and what is there is reachable.
      const menu = yield* call("read", { path: "menu.md" }, friend())
      assert.isTrue(menu.success, menu.errorMessage)
      expect(shown(menu)).toContain(sharedText)
      const listing = yield* call("read", { path: "." }, friend())
      expect(shown(listing)).toContain("menu.md")
      const found = yield* call("grep", { pattern: "lunch" }, friend())
      expect(shown(found)).toContain("menu.md:3:the shared lunch menu")
      const bundle = yield* call("context_for_task", { task: "lunch menu" }, friend())
      expect(shown(bundle)).toContain(sharedText)
    }).pipe(Effect.provide(registered(dir)))
  })

  it.live("writes stay in shared/: write and edit by outside paths are refused, a relative write lands in shared/", () => {
    const dir = agentFolder()
    return Effect.gen(function*() {
      for (const path of ["../KNOWLEDGE.md", "./../notes/new.md", NodePath.join(dir, "private.md"), "up/private.md", "link-file.md"]) {
        const written = yield* call("write", { path, content: "overwritten" }, friend())
        expect(written.errorCode, path).toBe("PERMISSION_DENIED")
        expect(written.errorMessage, path).toContain("shared/")
        const edited = yield* call("edit", { path, oldString: marker, newString: "gone" }, friend())
        expect(edited.errorCode, path).toBe("PERMISSION_DENIED")
      }
      expect(NodeFs.readFileSync(NodePath.join(dir, "KNOWLEDGE.md"), "utf8")).toContain(marker)
      expect(NodeFs.readFileSync(NodePath.join(dir, "private.md"), "utf8")).toContain(marker)
      const written = yield* call("write", { path: "notes/todo.md", content: "buy milk\n" }, friend())
      assert.isTrue(written.success, written.errorMessage)
      expect(NodeFs.readFileSync(NodePath.join(dir, "shared", "notes", "todo.md"), "utf8")).toBe("buy milk\n")
      expect(NodeFs.existsSync(NodePath.join(dir, "notes", "todo.md"))).toBe(false)
      // shared/notes/ is not the agent's daily notes: a dated file there is no past note to protect.
      const dated = yield* call("write", { path: "notes/2020-01-01.md", content: "old menu\n" }, friend())
      assert.isTrue(dated.success, dated.errorMessage)
    }).pipe(Effect.provide(registered(dir)))
  })

  it.live("bash runs in shared/ (a process: it is not confined beyond its working folder)", () => {
    const dir = agentFolder()
    return Effect.gen(function*() {
      const pwd = yield* call("bash", { command: "pwd" }, friend())
      assert.isTrue(pwd.success, pwd.errorMessage)
      expect((pwd.data as { stdout: string }).stdout.trim()).toBe(NodePath.join(dir, "shared"))
      // Its processes carry the agent folder's tag, so a dead runtime's orphans of a friend's call are reaped too.
      const tagged = yield* call("bash", { command: `printf '%s' "$${callTagVariable}"` }, friend())
      expect((tagged.data as { stdout: string }).stdout.startsWith(`${folderTagKey(dir)}-`)).toBe(true)
      const operatorPwd = yield* call("bash", { command: "pwd" }, operator)
      expect((operatorPwd.data as { stdout: string }).stdout.trim()).toBe(dir)
    }).pipe(Effect.provide(registered(dir)))
  })

  it.live("the same files put in shared/ are reachable", () => {
    const dir = agentFolder()
    const copyNote = "(the copy in shared/)"
    for (const file of ["notes/2026-11-26.md", "KNOWLEDGE.md", "USERS.md", "private.md"]) {
      writeFiles(dir, { [`shared/${file}`]: `${NodeFs.readFileSync(NodePath.join(dir, file), "utf8")}${copyNote}\n` })
    }
    return Effect.gen(function*() {
      for (const path of ["notes/2026-11-26.md", "KNOWLEDGE.md", "USERS.md", "private.md", NodePath.join(dir, "shared", "KNOWLEDGE.md")]) {
        const read = yield* call("read", { path }, friend())
        assert.isTrue(read.success, read.errorMessage)
        expect(shown(read), path).toContain(marker)
        expect(shown(read), path).toContain(copyNote)
      }
      const hits = yield* call("grep", { pattern: markerPattern }, friend())
      for (const file of ["notes/2026-11-26.md", "KNOWLEDGE.md", "USERS.md", "private.md"]) expect(shown(hits)).toContain(`${file}:`)
      expect(shown(hits)).not.toContain("bank.ts")
      expect(shown(yield* call("glob", { pattern: "notes/*" }, friend()))).toContain("notes/2026-11-26.md")
    }).pipe(Effect.provide(registered(dir)))
  })

  it.live("the operator (no audience, or the main conversation) reaches the whole folder as before", () => {
    const dir = agentFolder()
    return Effect.gen(function*() {
      for (const audience of [undefined, operator]) {
        for (const path of ["notes/2026-11-26.md", "KNOWLEDGE.md", "USERS.md", "private.md", NodePath.join(dir, "KNOWLEDGE.md"), "shared/link-file.md"]) {
          const read = yield* call("read", { path }, audience)
          assert.isTrue(read.success, `${path}: ${read.errorMessage}`)
          expect(shown(read)).toContain(marker)
        }
        const hits = yield* call("grep", { pattern: markerPattern }, audience)
        for (const file of ["notes/2026-11-26.md", "KNOWLEDGE.md", "USERS.md", "private.md", "knowledge/bank.ts"]) {
          expect(shown(hits)).toContain(`${file}:`)
        }
        expect(shown(yield* call("context_for_task", { task: "bank PIN" }, audience))).toContain(marker)
        expect(shown(yield* call("glob", { pattern: "notes/*" }, audience))).toContain("notes/2026-11-26.md")
      }
    }).pipe(Effect.provide(registered(dir)))
  })

  it.live("a user whose memory reach is all reaches the whole folder (still never .kern/)", () => {
    const dir = agentFolder()
    return Effect.gen(function*() {
      const read = yield* call("read", { path: "KNOWLEDGE.md" }, friend("all"))
      assert.isTrue(read.success, read.errorMessage)
      expect(shown(read)).toContain(marker)
      expect(shown(yield* call("grep", { pattern: markerPattern }, friend("all")))).toContain("notes/2026-11-26.md:")
      const secrets = yield* call("read", { path: ".kern/.env" }, friend("all"))
      expect(secrets.errorCode).toBe("PERMISSION_DENIED")
    }).pipe(Effect.provide(registered(dir)))
  })

  it.live("an agent folder from before shared/ works: it is created, empty; a shared/ that is a link is refused", () => {
    const dir = agentFolder({ shared: false })
    return Effect.gen(function*() {
      const listing = yield* call("read", { path: "." }, friend())
      assert.isTrue(listing.success, listing.errorMessage)
      expect(shown(listing)).toContain("(0 entries)")
      expect(NodeFs.statSync(NodePath.join(dir, "shared")).isDirectory()).toBe(true)
      NodeFs.rmdirSync(NodePath.join(dir, "shared"))
      NodeFs.symlinkSync("notes", NodePath.join(dir, "shared"))
      for (const [toolId, args] of [["read", { path: "2026-11-26.md" }], ["grep", { pattern: markerPattern }], ["glob", { pattern: "*" }]] as const) {
        const result = yield* call(toolId, args, friend())
        expect(result.errorCode, toolId).toBe("PERMISSION_DENIED")
        expect(result.errorMessage, toolId).toContain("shared/ in the agent folder is a symbolic link")
        expect(shown(result)).not.toContain(marker)
      }
    }).pipe(Effect.provide(registered(dir)))
  })
})

describe("what a non-operator's tools reach: the operator's runtime, artifacts and other users", () => {
  it.live("kern status, users and logs are the operator's; config and env stay; kern_pair is refused", () => {
    const dir = agentFolder()
    return Effect.gen(function*() {
      for (const action of ["status", "users", "logs"]) {
        const result = yield* call("kern", { action }, friend())
        expect(result.errorCode, action).toBe("PERMISSION_DENIED")
        expect(result.errorMessage, action).toContain("the operator's")
        expect(shown(result)).not.toContain(marker)
        const operatorResult = yield* call("kern", { action }, operator)
        assert.isTrue(operatorResult.success, operatorResult.errorMessage)
      }
      const users = yield* call("kern", { action: "users" }, operator)
      expect(shown(users)).toContain(marker)
      for (const action of ["config", "env"]) {
        const result = yield* call("kern", { action }, friend())
        assert.isTrue(result.success, result.errorMessage)
      }
      const store = yield* PairingStore
      const waiting = yield* store.request({ interface: "telegram", userId: "900", chatId: "900" })
      const pair = yield* call("kern_pair", { code: waiting.code }, friend())
      expect(pair.errorCode).toBe("PERMISSION_DENIED")
      expect(yield* store.isApproved("telegram", "900")).toBe(false)
    }).pipe(Effect.provide(registered(dir)))
  })

  it.live("retrieve_tool_output: the operator's artifact is not found in a friend's conversation, their own is", () => {
    const dir = agentFolder()
    return Effect.gen(function*() {
      const { own, theirs } = yield* plantArtifacts
      for (const args of [{ artifactId: theirs }, { artifactId: theirs, grep: markerPattern }, { artifactId: theirs, offset: 2 }]) {
        const result = yield* call("retrieve_tool_output", args, friend())
        expect(result.errorCode).toBe("NOT_FOUND")
        expect(result.errorMessage).toContain("in this conversation")
        expect(shown(result)).not.toContain(marker)
      }
      const mine = yield* call("retrieve_tool_output", { artifactId: own }, friend())
      assert.isTrue(mine.success, mine.errorMessage)
      expect(shown(mine)).toContain(sharedText)
      for (const audience of [undefined, operator]) {
        const result = yield* call("retrieve_tool_output", { artifactId: theirs }, audience)
        assert.isTrue(result.success, result.errorMessage)
        expect(shown(result)).toContain(marker)
      }
    }).pipe(Effect.provide(registered(dir)))
  })

  it.live("message: a friend's conversation reaches only its own chat; the operator's reaches any paired user", () => {
    const dir = agentFolder()
    return Effect.scoped(Effect.gen(function*() {
      const sent = yield* Ref.make<ReadonlyArray<string>>([])
      const channels = yield* Channels.Channels
      yield* channels.register({
        interface: "telegram",
        status: Effect.succeed(new ChannelStatus({ interface: "telegram", state: "connected", detail: "", sinceMs: 0 })),
        send: (chatId, text) => Ref.update(sent, (all) => [...all, `${chatId}:${text}`]),
        sendFile: (chatId, file) => Ref.update(sent, (all) => [...all, `${chatId}:file:${file.name}`])
      })
      const store = yield* PairingStore
      for (const userId of ["555", "777"]) {
        const pending = yield* store.request({ interface: "telegram", userId, chatId: userId })
        yield* store.approve(pending.code, "operator")
      }
      const other = yield* call("message", { userId: "777", interface: "telegram", text: "from the friend" }, friend())
      expect(other.errorCode).toBe("PERMISSION_DENIED")
      expect(other.errorMessage).toContain("reaches only this chat")
      const stranger = yield* call("message", { userId: "12", interface: "telegram", text: "anyone?" }, friend())
      expect(stranger.errorCode).toBe("PERMISSION_DENIED")
      const self = yield* call("message", { userId: "555", interface: "telegram", text: "to myself" }, friend())
      assert.isTrue(self.success, self.errorMessage)
      const fromOperator = yield* call("message", { userId: "777", interface: "telegram", text: "from the operator" }, operator)
      assert.isTrue(fromOperator.success, fromOperator.errorMessage)
      expect(yield* Ref.get(sent)).toEqual(["555:to myself", "777:from the operator"])
    })).pipe(Effect.provide(registered(dir)))
  })
})
