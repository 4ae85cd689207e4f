import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { glob, globMaxResults } from "../../src/tools/glob.js"
import { compileGlob } from "../../src/tools/globPattern.js"
import { grep, grepMaxMatches } from "../../src/tools/grep.js"
import { inSession, makeWorkspace, toolsLayer } from "./support.js"

const tree = {
  ".gitignore": "dist/\n*.log\n",
  "README.md": "# Project\nTODO: write docs\n",
  "src/a.ts": "export const a = 1 // TODO tidy\n",
  "src/b.tsx": "export const b = 2\n",
  "src/nested/.gitignore": "secret.md\n",
  "src/nested/secret.md": "TODO hidden\n",
  "src/nested/c.md": "nothing\nTODO nested\n",
  "dist/out.js": "TODO built\n",
  "debug.log": "TODO log\n",
  "node_modules/dep/index.js": "TODO dep\n",
  ".git/config": "TODO git\n"
}

describe("glob patterns", () => {
  const cases: ReadonlyArray<readonly [string, string, boolean]> = [
    ["**/*.md", "README.md", true],
    ["**/*.md", "a/b/c.md", true],
    ["*.md", "a/b/c.md", true],
    ["src/*.ts", "src/a.ts", true],
    ["src/*.ts", "src/x/a.ts", false],
    ["src/**/*.{ts,tsx}", "src/x/y/b.tsx", true],
    ["src/**", "src/x/y", true],
    ["file?.txt", "file1.txt", true],
    ["file?.txt", "file10.txt", false],
    ["[ab].js", "b.js", true],
    ["[!ab].js", "b.js", false],
    ["[!ab].js", "c.js", true],
    ["**/.env", "x/.env", true],
    ["*.md", ".hidden.md", true],
    ["a.(x)", "a.(x)", true],
    ["a+b.txt", "aab.txt", false],
    ["a+b.txt", "a+b.txt", true]
  ]
  for (const [pattern, path, expected] of cases) {
    it(`${pattern} ${expected ? "matches" : "does not match"} ${path}`, () => {
      assert.strictEqual(Either.getOrThrow(compileGlob(pattern)).matches(path), expected)
    })
  }
})

describe("glob", () => {
  it.effect("finds files newest first, honouring .gitignore (also nested) and skipping node_modules and .git", () =>
    Effect.gen(function*() {
      const root = makeWorkspace(tree)
      const old = new Date(Date.now() - 60_000)
      NodeFs.utimesSync(NodePath.join(root, "README.md"), old, old)
      const out = yield* glob({ pattern: "**/*.md" }).pipe(inSession(), Effect.provide(toolsLayer(root, {}, { memoryDb: true })))
      assert.deepStrictEqual(out.files, ["src/nested/c.md", "README.md"])
      const all = yield* glob({ pattern: "*", path: "src" }).pipe(inSession(), Effect.provide(toolsLayer(root, {}, { memoryDb: true })))
      assert.sameMembers([...all.files], ["src/a.ts", "src/b.tsx", "src/nested/c.md", "src/nested/.gitignore"])
    }))

  it.effect("caps the result with a note", () =>
    Effect.gen(function*() {
      const files: Record<string, string> = {}
      for (let i = 0; i < globMaxResults + 7; i++) files[`many/f${i}.txt`] = "x"
      const root = makeWorkspace(files)
      const out = yield* glob({ pattern: "*.txt" }).pipe(inSession(), Effect.provide(toolsLayer(root, {}, { memoryDb: true })))
      assert.strictEqual(out.files.length, globMaxResults)
      assert.strictEqual(out.total, globMaxResults + 7)
      assert.include(out.text, "7 more files not shown")
    }))
})

describe("grep", () => {
  it.effect("prints file:line:text, honouring .gitignore and skipping binaries, node_modules and .git", () =>
    Effect.gen(function*() {
      const root = makeWorkspace(tree)
      NodeFs.writeFileSync(NodePath.join(root, "blob.bin"), Buffer.concat([Buffer.from("TODO "), Buffer.from([0, 1, 2])]))
      const out = yield* grep({ pattern: "TODO" }).pipe(inSession(), Effect.provide(toolsLayer(root, {}, { memoryDb: true })))
      assert.deepStrictEqual(out.text.split("\n"), [
        "README.md:2:TODO: write docs",
        "src/a.ts:1:export const a = 1 // TODO tidy",
        "src/nested/c.md:2:TODO nested"
      ])
    }))

  it.effect("filters by include and path, and searches a single file", () =>
    Effect.gen(function*() {
      const root = makeWorkspace(tree)
      const layer = toolsLayer(root, {}, { memoryDb: true })
      const md = yield* grep({ pattern: "^TODO", include: "*.md" }).pipe(inSession(), Effect.provide(layer))
      assert.deepStrictEqual(md.text.split("\n"), ["README.md:2:TODO: write docs", "src/nested/c.md:2:TODO nested"])
      const one = yield* grep({ pattern: "const \\w", path: "src/b.tsx" }).pipe(inSession(), Effect.provide(layer))
      assert.strictEqual(one.text, "src/b.tsx:1:export const b = 2")
    }))

  it.effect("an include or pattern that is no glob (empty, ./) is a VALIDATION_ERROR, never a defect", () =>
    Effect.gen(function*() {
      const layer = toolsLayer(makeWorkspace(tree), {}, { memoryDb: true })
      for (const include of ["", "./"]) {
        const error = yield* grep({ pattern: "TODO", include }).pipe(inSession(), Effect.provide(layer), Effect.flip)
        assert.strictEqual(error.code, "VALIDATION_ERROR")
        assert.include(error.message, "include is not a usable glob")
      }
      const error = yield* glob({ pattern: "./" }).pipe(inSession(), Effect.provide(layer), Effect.flip)
      assert.strictEqual(error.code, "VALIDATION_ERROR")
    }))

  it.effect("an invalid regex is a VALIDATION_ERROR; matches are capped with a note", () =>
    Effect.gen(function*() {
      const root = makeWorkspace({ "big.txt": "hit\n".repeat(grepMaxMatches + 50) })
      const layer = toolsLayer(root, {}, { memoryDb: true })
      const error = yield* grep({ pattern: "(" }).pipe(inSession(), Effect.provide(layer), Effect.flip)
      assert.strictEqual(error.code, "VALIDATION_ERROR")
      const out = yield* grep({ pattern: "hit" }).pipe(inSession(), Effect.provide(layer))
      assert.strictEqual(out.matches, grepMaxMatches + 50)
      assert.include(out.text, "50 more matches not shown")
    }))
})
