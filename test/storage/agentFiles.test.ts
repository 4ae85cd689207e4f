import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Either, Exit, Layer, Logger, LogLevel, Option, Scope } from "effect"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { buildSystemPrompt, buildSystemPromptFrom } from "../../src/context/systemPrompt.js"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { makeFileCache } from "../../src/memory/fileCache.js"
import { knowledgeReport } from "../../src/memory/knowledge.js"
import { MemoryCommits } from "../../src/memory/MemoryCommits.js"
import * as MemoryCommitsLayer from "../../src/memory/MemoryCommits.js"
import * as NotesSummary from "../../src/memory/NotesSummary.js"
import { bagOfWordsEmbedding } from "../../src/recall/bagOfWords.js"
import { Embedder } from "../../src/recall/Embedder.js"
import { Recall } from "../../src/recall/Recall.js"
import { readAgentFile, readAgentFileSync } from "../../src/storage/agentFiles.js"
import * as Database from "../../src/storage/Database.js"
import { contextForTask } from "../../src/tools/contextForTask.js"
import { grep } from "../../src/tools/grep.js"
import { read } from "../../src/tools/read.js"
import { summarizeFileStructure } from "../../src/tools/summarizeFileStructure.js"
import { write } from "../../src/tools/write.js"
import { PairingStore } from "../../src/users/PairingStore.js"
import { syncUsersFile } from "../../src/users/usersFile.js"
import { recallLayer, loadedAt } from "../recall/harness.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import {
  type Attack,
  attacks,
  bigMarker,
  envSecret,
  fileAttacks,
  leaked,
  makeOutside,
  plantAll,
  plantSecrets,
  releaseFifos,
  slug
} from "../support/linkCorpus.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { inSession, toolsLayer } from "../tools/support.js"
import * as SpendGuard from "../../src/model/SpendGuard.js"

/** Generous: the point is that the operation ends at all (a FIFO read never does), not how fast. */
const bound = Duration.seconds(60)
/** Past the bound, so a blocked reader fails on the bound's message, not vitest's. */
const testTimeout = 180_000

/** `effect`, failing the test if it does not finish within the bound (a reader blocked on a FIFO). */
const finishes = <A, E, R>(what: string, dir: string, effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.timeoutFail({ duration: bound, onTimeout: () => new Error(`${what} did not finish: blocked on a FIFO?`) }),
    Effect.ensuring(Effect.sync(() => releaseFifos(dir)))
  )

/** An agent folder with its secrets, a legitimate note and knowledge file, and a folder outside it. */
const agentFolder = (files: Record<string, string> = {}) => {
  const dir = NodeFs.realpathSync(makeTempDir("kern-door-"))
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({ name: "door", model: "m", embeddingModel: false }),
    "AGENTS.md": "# rules\n",
    "notes/2026-01-01.md": "legit note about the harbour\n",
    "knowledge/boat.md": "legit knowledge about the sailboat\n",
    ...files
  })
  plantSecrets(dir)
  return { dir, outside: makeOutside() }
}

/** Warnings logged while `effect` runs. */
const collectingWarnings = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ message }) => lines.push(Array.isArray(message) ? message.join(" ") : String(message)))
  const provide = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    effect.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)), Logger.withMinimumLogLevel(LogLevel.Warning))
  return { lines, provide }
}

const allText = (dir: string) =>
  [".kern/kern.db", ".kern/kern.db-wal"].map((file) => NodePath.join(dir, file)).filter((file) => NodeFs.existsSync(file))
    .map((file) => NodeFs.readFileSync(file).toString("latin1")).join("\n")

describe("the door: every attack refused with its reason", () => {
  const expected: Record<string, string> = {
    "absolute symlink to .kern/.env": "kern",
    "relative symlink to .kern/.env": "kern",
    "symlink chain to .kern/.env": "kern",
    "absolute symlink to a key outside": "outside",
    "relative symlink to a key outside": "outside",
    "hard link to .kern/.env": "hard-link",
    "hard link to a key outside": "hard-link",
    "FIFO": "not-regular",
    "symlink to /dev/zero": "outside",
    "symlink to /dev/urandom": "outside",
    "character device node": "not-regular",
    "oversized file": "too-large"
  }
  it.live("refuses each file attack, reads the legitimate files, and refuses .kern/ by name", () =>
    Effect.gen(function*() {
      const { dir, outside } = agentFolder()
      for (const attack of fileAttacks) {
        const target = NodePath.join(dir, "notes", `${slug(attack)}.md`)
        if (!attack.plant(dir, outside, target)) continue
        const result = yield* finishes(attack.name, dir, Effect.either(readAgentFile(target, { roots: [dir] })))
        expect(Either.isLeft(result), attack.name).toBe(true)
        if (Either.isLeft(result)) {
          expect(result.left.reason, attack.name).toBe(expected[attack.name])
          expect(leaked(result.left.message), attack.name).toEqual([])
        }
      }
      const legit = yield* readAgentFile("notes/2026-01-01.md", { roots: [dir] })
      expect(Buffer.from(legit.bytes).toString()).toContain("harbour")
      const byName = yield* Effect.flip(readAgentFile(".kern/.env", { roots: [dir] }))
      expect(byName.reason).toBe("kern")
      const viaFolder = yield* Effect.flip(readAgentFile("notes/../.KERN/memo.md", { roots: [dir] }))
      expect(viaFolder.reason).toBe("kern")
      // With the workspace guard off a link out is allowed, but never .kern/, a hard link or a FIFO.
      const target = NodePath.join(dir, "notes", "out-again.md")
      NodeFs.symlinkSync(NodePath.join(outside, "key.md"), target)
      expect(Either.isRight(readAgentFileSync(target, { roots: [dir], outside: "allow" }))).toBe(true)
      const kernLink = NodePath.join(dir, "notes", "kern-again.md")
      NodeFs.symlinkSync(NodePath.join(dir, ".kern", ".env"), kernLink)
      expect(Either.getLeft(readAgentFileSync(kernLink, { roots: [dir], outside: "allow" })).pipe(Option.map((e) => e.reason))).toEqual(Option.some("kern"))
    }), testTimeout)
})

describe("recall indexing through the door", () => {
  it.live("no secret reaches kern.db, an embeddings request or a search; each refused file is warned about once", () =>
    Effect.gen(function*() {
      const { dir, outside } = agentFolder()
      const planted = [...plantAll(dir, outside, "notes"), ...plantAll(dir, outside, "knowledge")]
      NodeFs.mkdirSync(NodePath.join(dir, ".kern", "sessions"), { recursive: true })
      const embedded: Array<string> = []
      const embedder = Layer.succeed(Embedder, {
        model: Option.some("test-embedding"),
        offReason: "",
        embed: (texts) =>
          Effect.sync(() => {
            embedded.push(...texts)
            return texts.map((text) => Float32Array.from(bagOfWordsEmbedding(text, 32)))
          })
      })
      const warnings = collectingWarnings()
      yield* Effect.gen(function*() {
        const recall = yield* Recall
        yield* finishes("recall sync", dir, recall.sync)
        yield* finishes("recall sync again", dir, recall.sync)
        expect((yield* recall.search({ query: "harbour" })).hits.map((hit) => hit.path)).toContain("notes/2026-01-01.md")
        for (const query of ["OPENROUTER_API_KEY", "KERN_AUTH_TOKEN", "KEY", "oversized", "memo", "key"]) {
          const hits = (yield* recall.search({ query, limit: 50 })).hits
          expect(leaked(JSON.stringify(hits)), query).toEqual([])
        }
      }).pipe(Effect.provide(recallLayer(loadedAt(dir, { embeddingModel: "test-embedding" }), embedder)), warnings.provide)
      expect(leaked(allText(dir))).toEqual([])
      expect(leaked(embedded.join("\n"))).toEqual([])
      expect(embedded.join("\n")).toContain("harbour")
      // One warning per refused file over two passes (folder links are not read: the files under them are).
      for (const path of planted.filter((p) => p.endsWith(".md"))) {
        expect(warnings.lines.filter((line) => line.includes(`${path} `)).length, path).toBe(1)
      }
    }), testTimeout)
})

/** The system prompt of `dir`, with the warnings it logged. */
const promptOf = (dir: string) => {
  const warnings = collectingWarnings()
  const layer = Layer.mergeAll(NotesSummary.layerNone, AgentConfig.layer(dir)).pipe(
    Layer.provideMerge(Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, {})))
  )
  return finishes("the system prompt", dir, buildSystemPrompt.pipe(Effect.provide(layer), warnings.provide)).pipe(
    Effect.map((prompt) => ({ prompt, warnings: warnings.lines }))
  )
}

describe("the system prompt through the door", () => {
  const cases: ReadonlyArray<readonly [Attack, string]> = fileAttacks.flatMap((attack) =>
    [[attack, "notes/2099-01-01.md"], [attack, "AGENTS.md"]] as const
  )
  it.live("an attack as today's note or as AGENTS.md: left out with a warning naming it, the turn not blocked", () =>
    Effect.gen(function*() {
      for (const [attack, target] of cases) {
        const { dir, outside } = agentFolder()
        NodeFs.rmSync(NodePath.join(dir, target), { force: true })
        if (!attack.plant(dir, outside, NodePath.join(dir, target))) continue
        const { prompt, warnings } = yield* promptOf(dir)
        expect(leaked(prompt), `${attack.name} as ${target}`).toEqual([])
        expect(warnings.filter((line) => line.includes(target)).length, `${attack.name} as ${target}`).toBe(1)
      }
    }), testTimeout)
})

describe("the turn runner's file cache", () => {
  it.live("a refused memory file is warned about once over many turns, and again once it was fine in between", () =>
    Effect.gen(function*() {
      const { dir } = agentFolder()
      const agents = NodePath.join(dir, "AGENTS.md")
      NodeFs.rmSync(agents)
      NodeFs.linkSync(NodePath.join(dir, ".kern", ".env"), agents)
      const warnings = collectingWarnings()
      const layer = Layer.mergeAll(NotesSummary.layerNone, AgentConfig.layer(dir)).pipe(
        Layer.provideMerge(Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, {})))
      )
      const files = yield* makeFileCache
      const turn = buildSystemPromptFrom(files).pipe(Effect.provide(layer), warnings.provide)
      for (let i = 0; i < 3; i++) expect(leaked(yield* turn)).toEqual([])
      expect(warnings.lines.filter((line) => line.includes("AGENTS.md")).length).toBe(1)
      NodeFs.rmSync(agents)
      NodeFs.writeFileSync(agents, "# fixed rules\n")
      expect(yield* turn).toContain("fixed rules")
      NodeFs.rmSync(agents)
      NodeFs.linkSync(NodePath.join(dir, ".kern", ".env"), agents)
      yield* turn
      yield* turn
      expect(warnings.lines.filter((line) => line.includes("AGENTS.md")).length).toBe(2)
    }), testTimeout)
})

describe("the notes summary through the door", () => {
  it.scoped("notes that are links, FIFOs or devices never reach the summary model", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const { dir, outside } = agentFolder({ "notes/2026-01-02.md": "second legit note\n", "notes/2099-12-31.md": "latest\n" })
      NodeFs.writeFileSync(
        NodePath.join(dir, ".kern", "config.json"),
        JSON.stringify({ model: "m", summaryModel: "cheap", baseURL: server.baseURL, api: "chat" })
      )
      // The five notes before the latest: three attacks, two legitimate notes.
      const picked = [fileAttacks.find((a) => a.name === "hard link to .kern/.env")!, fileAttacks.find((a) => a.name === "FIFO")!, fileAttacks.find((a) => a.name === "relative symlink to .kern/.env")!]
      picked.forEach((attack, i) => attack.plant(dir, outside, NodePath.join(dir, "notes", `2026-01-1${i}.md`)))
      yield* server.reply(FakeReply.text("A summary."))
      const platform = Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" }))
      const layer = NotesSummary.layer.pipe(
        Layer.provide(SpendGuard.layer),
        Layer.provideMerge(Layer.mergeAll(AgentConfig.layer(dir), Database.layerMemory, NodeHttpClient.layerUndici)),
        Layer.provideMerge(platform)
      )
      const warnings = collectingWarnings()
      const summary = Context.get(yield* Layer.build(layer), NotesSummary.NotesSummary)
      yield* finishes("the notes summary", dir, Effect.zipRight(summary.current, summary.settled()).pipe(warnings.provide))
      // The bodies: the request's Authorization header rightly carries the key from .kern/.env.
      const requests = JSON.stringify((yield* server.requests).map((request) => request.body))
      expect(requests).toContain("second legit note")
      expect(leaked(requests)).toEqual([])
      for (let i = 0; i < picked.length; i++) {
        expect(warnings.lines.filter((line) => line.includes(`notes/2026-01-1${i}.md`)).length).toBe(1)
      }
    }), testTimeout)
})

describe("the knowledge check through the door", () => {
  it.live("KNOWLEDGE.md as a FIFO and a knowledge/ full of attacks: the check finishes, refused files left out", () =>
    Effect.gen(function*() {
      const { dir, outside } = agentFolder()
      const planted = plantAll(dir, outside, "knowledge")
      NodeChildProcess.execFileSync("mkfifo", [NodePath.join(dir, "KNOWLEDGE.md")])
      const warnings = collectingWarnings()
      const report = yield* finishes(
        "the knowledge check",
        dir,
        knowledgeReport(dir, 30).pipe(Effect.provide(NodeContext.layer), warnings.provide)
      )
      expect(report.unindexed).toEqual(["knowledge/boat.md"])
      for (const path of planted.filter((p) => p.endsWith(".md"))) {
        expect(warnings.lines.some((line) => line.includes(path)), path).toBe(true)
      }
    }), testTimeout)
})

const git = (dir: string, ...args: ReadonlyArray<string>) =>
  NodeChildProcess.execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir, encoding: "utf8" })

describe("autoCommit through the door", () => {
  it.live("a hard link to .kern/.env (or a key outside), a FIFO or an oversized note never enters git history", () =>
    Effect.gen(function*() {
      const { dir, outside } = agentFolder()
      git(dir, "init", "-q", "-b", "main")
      git(dir, "add", "AGENTS.md", "notes", "knowledge")
      git(dir, "commit", "-q", "-m", "init")
      const planted = [...plantAll(dir, outside, "notes"), ...plantAll(dir, outside, "knowledge")]
      NodeFs.writeFileSync(NodePath.join(dir, "notes", "2026-01-02.md"), "a new legit note\n")
      const warnings: Array<string> = []
      const scope = yield* Scope.make()
      const layer = MemoryCommitsLayer.layer((line) => Effect.sync(() => warnings.push(line))).pipe(
        Layer.provide(AgentConfig.layer(dir)),
        Layer.provide(Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, {}))),
        Layer.orDie
      )
      const memory = Context.get(yield* Layer.buildWithScope(layer, scope), MemoryCommits)
      const committed = yield* finishes("autoCommit", dir, memory.commitNow)
      expect(committed).toContain("notes/2026-01-02.md")
      yield* finishes("autoCommit again", dir, memory.commitNow)
      yield* Scope.close(scope, Exit.void)
      const history = git(dir, "log", "-p", "--all", "--format=%H %s")
      expect(history).toContain("a new legit note")
      expect(leaked(history)).toEqual([])
      const stored = git(dir, "ls-tree", "-r", "HEAD", "--name-only")
      for (const refused of ["hard-link-to-kern-env.md", "hard-link-to-a-key-outside.md", "fifo.md", "character-device-node.md", "oversized-file.md"]) {
        expect(stored, refused).not.toContain(`notes/${refused}`)
      }
      // git lists no FIFO or device; the files it would have taken are each warned about once.
      for (const refused of ["hard-link-to-kern-env.md", "hard-link-to-a-key-outside.md", "oversized-file.md"]) {
        expect(warnings.filter((line) => line.includes(`notes/${refused}`)).length, refused).toBe(1)
      }
      expect(planted.length).toBeGreaterThan(0)
    }), testTimeout)
})

describe("the file tools through the door", () => {
  const run = <A, E, R>(root: string, effect: Effect.Effect<A, E, R>) =>
    finishes("a file tool", root, effect.pipe(inSession(), Effect.provide(toolsLayer(root, {}, { memoryDb: true }))))

  it.live("read, summarize_file_structure and write refuse every attack; grep and context_for_task show no secret", () =>
    Effect.gen(function*() {
      const { dir, outside } = agentFolder()
      const planted = plantAll(dir, outside, "notes")
      // The tools' own caps are larger (read 64 MB, grep 10 MB): the oversized note is a file they may read.
      const secretsIn = (text: string) => leaked(text).filter((marker) => marker !== bigMarker)
      for (const path of planted.filter((p) => p.endsWith(".md") && !p.includes("oversized"))) {
        const attack = attacks.find((a) => path.endsWith(`${slug(a)}.md`))!
        const readFailure = yield* Effect.flip(run(dir, read({ path, offset: 1, limit: 100 })))
        expect(leaked(readFailure.message), attack.name).toEqual([])
        const outline = yield* Effect.either(run(dir, summarizeFileStructure({ path })))
        expect(Either.isLeft(outline), attack.name).toBe(true)
        const written = yield* Effect.either(run(dir, write({ path, content: "overwritten" })))
        expect(Either.isLeft(written), attack.name).toBe(true)
      }
      expect(NodeFs.readFileSync(NodePath.join(dir, ".kern", ".env"), "utf8")).toContain(envSecret)
      for (const pattern of ["OPENROUTER_API_KEY|BEGIN KEY|CORPUS", "sk-or"]) {
        const found = yield* run(dir, grep({ pattern }))
        expect(secretsIn(found.text), pattern).toEqual([])
      }
      const hardLinked = yield* Effect.flip(run(dir, grep({ pattern: "KEY", path: "notes/hard-link-to-kern-env.md" })))
      expect("code" in hardLinked ? hardLinked.code : hardLinked.message).toBe("PERMISSION_DENIED")
      const bundle = yield* run(dir, contextForTask({ task: "OPENROUTER_API_KEY TELEGRAM_BOT_TOKEN key corpus", budgetBytes: 20_000 }))
      expect(secretsIn(bundle.text)).toEqual([])
    }), testTimeout)
})

describe("USERS.md through the door", () => {
  it.live("a USERS.md that links to .kern/.env (or is a hard link, or a FIFO) is never copied into a regular USERS.md", () =>
    Effect.gen(function*() {
      for (const attack of fileAttacks.filter((a) => !a.name.includes("oversized"))) {
        const { dir, outside } = agentFolder()
        const usersFile = NodePath.join(dir, "USERS.md")
        if (!attack.plant(dir, outside, usersFile)) continue
        const platform = Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, {}))
        const layer = Layer.mergeAll(
          PairingStore.Default.pipe(Layer.provideMerge(Database.layerMemory)),
          AgentConfig.layer(dir).pipe(Layer.provide(platform)),
          platform
        )
        const synced = yield* finishes("syncUsersFile", dir, Effect.either(syncUsersFile.pipe(Effect.provide(layer))))
        expect(Either.isLeft(synced), attack.name).toBe(true)
        const now = NodeFs.lstatSync(usersFile)
        // Still the link, FIFO or device it was: nothing was written in its place.
        expect(now.isFile() && now.nlink === 1, attack.name).toBe(false)
      }
    }), testTimeout)
})
