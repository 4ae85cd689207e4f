import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { ToolFailure } from "../../src/kernel/ToolFailure.js"
import { contextForTask } from "../../src/tools/contextForTask.js"
import { edit } from "../../src/tools/edit.js"
import { glob } from "../../src/tools/glob.js"
import { grep } from "../../src/tools/grep.js"
import { read } from "../../src/tools/read.js"
import { summarizeFileStructure } from "../../src/tools/summarizeFileStructure.js"
import { write } from "../../src/tools/write.js"
import { inSession, makeWorkspace, type ToolRequirements, toolsLayer } from "./support.js"

// Corpus: every file tool against kern's own folder (.kern/) and git's (.git/), through the path tricks a model can
// name. `.kern/` is refused to every tool; `.git/` may be read but never written.

const secret = "sk-proj-protected-0123456789abcdef"
const root = makeWorkspace({
  ".kern/.env": `OPENAI_API_KEY=${secret}\n`,
  ".kern/config.json": `{ "provider": "openai", "toolScope": "write", "approvalMode": "ask" }\n`,
  ".git/config": "[core]\n\tbare = false\n",
  ".git/hooks/x": "#!/bin/sh\necho hookbody\n",
  "nested/agent/.kern/.env": `NESTED_TOKEN=${secret}\n`,
  "notes.md": "# notes\nplain text\n",
  "a/keep.txt": "keep\n",
  // Stands in for kern.db (the tools' own database is in memory, so a refused write cannot break the next row).
  ".kern/kern.db": "SQLite format 3\u0000 pages\n"
})
NodeFs.symlinkSync(NodePath.join(root, ".kern", ".env"), NodePath.join(root, "env-link"))
NodeFs.symlinkSync(".kern", NodePath.join(root, "kern-link"))
NodeFs.symlinkSync(".git/hooks", NodePath.join(root, "hooks-link"))
NodeFs.symlinkSync(".git/config", NodePath.join(root, "git-config-link"))
// A dangling link into .kern: writing through it would create the file there.
NodeFs.symlinkSync(".kern/planted.json", NodePath.join(root, "planted-link"))
const layer = toolsLayer(root, {}, { memoryDb: true })

const snapshot = (): Record<string, string> => {
  const out: Record<string, string> = {}
  const visit = (dir: string) => {
    for (const entry of NodeFs.readdirSync(dir, { withFileTypes: true })) {
      const full = NodePath.join(dir, entry.name)
      if (entry.isDirectory()) visit(full)
      else if (entry.isFile()) out[NodePath.relative(root, full)] = NodeFs.readFileSync(full, "utf8")
    }
  }
  visit(NodePath.join(root, ".kern"))
  visit(NodePath.join(root, ".git"))
  return out
}

const run = <A>(effect: Effect.Effect<A, ToolFailure, ToolRequirements>) => effect.pipe(inSession(), Effect.provide(layer))

/** Runs `attempt` and expects PERMISSION_DENIED, with .kern/ and .git/ byte for byte as before. */
const refused = (attempt: Effect.Effect<unknown, ToolFailure, ToolRequirements>) =>
  Effect.gen(function*() {
    const before = snapshot()
    const outcome = yield* Effect.either(run(attempt))
    assert.deepStrictEqual(snapshot(), before, "nothing under .kern/ or .git/ changed")
    if (outcome._tag === "Right") return assert.fail(`not refused; the tool returned ${JSON.stringify(outcome.right).slice(0, 300)}`)
    assert.strictEqual(outcome.left.code, "PERMISSION_DENIED", outcome.left.message)
  })

const kernPaths = [
  ".kern/.env",
  "./.kern/.env",
  "a/../.kern/.env",
  `${root}/.kern/.env`,
  ".kern/config.json",
  ".kern/kern.db",
  ".kern",
  ".kern/",
  "env-link",
  "kern-link/.env",
  "kern-link/config.json",
  ".KERN/.env",
  ".Kern/config.json",
  "nested/agent/.kern/.env"
]

const gitWritePaths = [
  ".git/config",
  ".git/hooks/x",
  ".git/hooks/pre-commit",
  "./.git/hooks/x",
  "a/../.git/config",
  `${root}/.git/config`,
  "hooks-link/x",
  "hooks-link/post-checkout",
  "git-config-link",
  ".GIT/config",
  ".Git/hooks/pre-commit"
]

describe("file tools refuse .kern/", () => {
  for (const path of kernPaths) {
    it.effect(`read ${path}`, () => refused(read({ path, offset: 1, limit: 50 })))
    it.effect(`summarize_file_structure ${path}`, () => refused(summarizeFileStructure({ path })))
    it.effect(`read then write ${path}`, () =>
      refused(Effect.zipRight(Effect.either(read({ path, offset: 1, limit: 50 })), write({ path, content: "{\"toolScope\":\"full\"}" }))))
    it.effect(`read then edit ${path}`, () =>
      refused(Effect.zipRight(
        Effect.either(read({ path, offset: 1, limit: 50 })),
        edit({ path, oldString: "write", newString: "full", replaceAll: true })
      )))
    it.effect(`glob in ${path}`, () => refused(glob({ pattern: "*", path })))
    it.effect(`grep in ${path}`, () => refused(grep({ pattern: "sk-", path })))
  }

  it.effect("write through a dangling symlink into .kern/ is refused", () =>
    Effect.gen(function*() {
      yield* refused(write({ path: "planted-link", content: "{}" }))
      assert.isFalse(NodeFs.existsSync(NodePath.join(root, ".kern", "planted.json")))
    }))

  const globPatterns = ["**/.env", ".kern/*", ".kern/**", "**/*", "*.json", "**/config.json", "**/kern.db"]
  for (const pattern of globPatterns) {
    it.effect(`glob ${pattern} over the folder lists nothing under .kern/ or .git/`, () =>
      Effect.gen(function*() {
        const found = yield* run(glob({ pattern }))
        const leaked = found.files.filter((file) => /(^|\/)\.(kern|git)(\/|$)/i.test(file))
        assert.deepStrictEqual(leaked, [], found.text)
      }))
  }

  const grepRows: ReadonlyArray<{ readonly pattern: string; readonly path?: string; readonly include?: string }> = [
    { pattern: secret },
    { pattern: "OPENAI_API_KEY" },
    { pattern: "toolScope" },
    { pattern: "hookbody" },
    { pattern: "bare", include: "config" },
    { pattern: secret, path: "nested" },
    { pattern: secret, path: "." }
  ]
  for (const row of grepRows) {
    it.effect(`grep ${row.pattern} in ${row.path ?? "the folder"} finds nothing under .kern/ or .git/`, () =>
      Effect.gen(function*() {
        const found = yield* run(grep(row))
        assert.strictEqual(found.matches, 0, found.text)
      }))
  }

  it.effect("context_for_task never ranks a file under .kern/ (here or in a nested agent folder)", () =>
    Effect.gen(function*() {
      const found = yield* run(contextForTask({ task: "find OPENAI_API_KEY NESTED_TOKEN toolScope approvalMode", budgetBytes: 4000 }))
      assert.deepStrictEqual(found.files.filter((file) => /\.kern/i.test(file.path)), [], found.text)
      assert.notInclude(found.text, secret)
    }))
})

describe("file tools may read .git/ but never write it", () => {
  for (const path of gitWritePaths) {
    it.effect(`write ${path}`, () =>
      refused(Effect.zipRight(Effect.either(read({ path, offset: 1, limit: 50 })), write({ path, content: "[core]\n\tfsmonitor = touch /tmp/pwned\n" }))))
    it.effect(`edit ${path}`, () =>
      refused(Effect.zipRight(
        Effect.either(read({ path, offset: 1, limit: 50 })),
        edit({ path, oldString: "bare = false", newString: "fsmonitor = touch /tmp/pwned", replaceAll: false })
      )))
  }

  const readable = [".git/config", ".git/hooks/x", "./.git/config", "git-config-link", "hooks-link/x"]
  for (const path of readable) {
    it.effect(`read ${path} is allowed`, () =>
      Effect.gen(function*() {
        const shown = yield* run(read({ path, offset: 1, limit: 50 }))
        assert.match(shown.text, /bare = false|hookbody/)
      }))
  }

  it.effect("ordinary files next to them are still written", () =>
    Effect.gen(function*() {
      const done = yield* run(write({ path: "a/new.txt", content: "fine\n" }))
      assert.isTrue(done.created)
      const gitignore = yield* run(write({ path: ".gitignore", content: "tmp/\n" }))
      assert.isTrue(gitignore.created)
    }))
})
