// grep's scan (agentFileScan in src/storage/agentFiles.ts): a folder held open and its files opened through it must
// answer exactly as the door's full way does, for every attack of the link corpus planted deep in the tree, and a
// folder swapped for a link after the scan held it must never lead out.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { type AgentFileBytes, type AgentFileError, agentFileScan, readAgentFileSync } from "../../src/storage/agentFiles.js"
import { grep } from "../../src/tools/grep.js"
import { envSecret, leaked, makeOutside, outsideSecret, plantAll, plantSecrets, releaseFifos } from "../support/linkCorpus.js"
import { inSession, makeWorkspace, toolsLayer } from "./support.js"

const deep = "src/a/b/c"

/** What a read answered, comparable across the two ways: the refusal's reason and message, or the text. */
const answer = (read: Either.Either<AgentFileBytes, AgentFileError>) =>
  Either.isLeft(read)
    ? { refused: read.left.reason, message: read.left.message }
    : { text: Buffer.from(read.right.bytes).toString("utf8"), path: read.right.path, size: read.right.size }

/** Every path below `dir` (folders listed, links not followed), and the paths under its folder links one level down. */
const everyPath = (dir: string, folder = ""): Array<string> =>
  NodeFs.readdirSync(NodePath.join(dir, folder), { withFileTypes: true }).flatMap((entry) => {
    const relative = folder === "" ? entry.name : `${folder}/${entry.name}`
    if (entry.isDirectory()) return [relative, ...everyPath(dir, relative)]
    if (entry.isSymbolicLink() && NodeFs.statSync(NodePath.join(dir, relative), { throwIfNoEntry: false })?.isDirectory()) {
      return [relative, ...NodeFs.readdirSync(NodePath.join(dir, relative)).map((name) => `${relative}/${name}`)]
    }
    return [relative]
  })

const corpusFolder = () => {
  const dir = makeWorkspace({
    [`${deep}/legit.md`]: "legit text\n",
    [`${deep}/other.ts`]: "export const x = 1\n",
    "src/a/top.md": "top\n",
    [`${deep}/.KERN`]: "a file named like kern's folder\n",
    [`${deep}/back\\.kern\\slash.md`]: "a name holding .kern between backslashes\n",
    [`${deep}/.kern/nested.md`]: `${envSecret}\n`
  })
  plantSecrets(dir)
  const outside = makeOutside()
  plantAll(dir, outside, deep)
  return { dir, outside }
}

describe("grep's scan of a held folder", () => {
  it.scoped("answers every path of the corpus as the door's full way does, in any order", () =>
    Effect.gen(function*() {
      const { dir } = corpusFolder()
      const options = { roots: [dir], maxBytes: 10 * 1024 * 1024 }
      const paths = [...everyPath(dir), `${deep}/missing.md`, `${deep}/../c/legit.md`, `${deep}/`, `${deep}/.`]
      // Sorted (a folder's files in a row, as grep reads them), then shuffled (the held folder changes every read).
      const orders = [[...paths].sort(), paths.map((path, i) => ({ path, key: (i * 7919) % paths.length })).sort((a, b) => a.key - b.key).map((p) => p.path)]
      try {
        for (const order of orders) {
          const scan = yield* agentFileScan(options)
          for (const path of order) {
            for (const form of [path, NodePath.join(dir, path)]) {
              const expected = answer(readAgentFileSync(form, options))
              expect(answer(scan(form)), form).toEqual(expected)
            }
          }
        }
        // The corpus is what it should be: refusals of each kind, and legitimate files read.
        const scan = yield* agentFileScan(options)
        const answers = paths.map((path) => answer(scan(path)))
        const reasons = new Set(answers.flatMap((a) => ("refused" in a ? [a.refused] : [])))
        for (const reason of ["kern", "outside", "hard-link", "not-regular", "missing"]) expect(reasons).toContain(reason)
        expect(answers.filter((a) => "text" in a && a.text === "legit text\n").length).toBeGreaterThan(0)
        // Nothing read holds a secret but the oversized file's marker (grep's cap is larger than the door's default).
        const secrets = answers.flatMap((a) => ("text" in a ? leaked(a.text) : []))
        expect(secrets.filter((marker) => marker === envSecret || marker === outsideSecret)).toEqual([])
      } finally {
        releaseFifos(dir)
      }
    }), 120_000)

  it.scoped("a folder swapped for a link out after the scan held it never leads out", () =>
    Effect.gen(function*() {
      const dir = makeWorkspace({ [`${deep}/first.md`]: "first\n", [`${deep}/kept.md`]: "kept in the old folder\n" })
      const outside = makeOutside()
      const scan = yield* agentFileScan({ roots: [dir], maxBytes: 1024 * 1024 })
      expect(answer(scan(`${deep}/first.md`))).toMatchObject({ text: "first\n" })
      // The held folder moves away and a link out takes its name.
      NodeFs.renameSync(NodePath.join(dir, deep), NodePath.join(dir, `${deep}-old`))
      NodeFs.symlinkSync(outside, NodePath.join(dir, deep))
      const key = scan(`${deep}/key.md`)
      expect(Either.isLeft(key) && key.left.reason).toBe("outside")
      // A name the old folder still has is read from the old folder (inside), never from the link's target.
      const kept = answer(scan(`${deep}/kept.md`))
      expect(JSON.stringify(kept)).not.toContain(outsideSecret)
      expect(answer(scan(`${deep}/id_ed25519`))).toMatchObject({ refused: "outside" })
      // Read afresh (another folder held in between), the link is followed and refused as the full way does.
      scan("src/a/b/c-old/first.md")
      expect(answer(scan(`${deep}/kept.md`))).toMatchObject({ refused: "missing" })
      expect(answer(scan(`${deep}/key.md`))).toMatchObject({ refused: "outside" })
    }))
})

describe("grep's scan with its files opened ahead in a helper thread", () => {
  it.scoped("answers every path of the corpus as the door's full way does, on the plan and off it", () =>
    Effect.gen(function*() {
      const { dir } = corpusFolder()
      const options = { roots: [dir], maxBytes: 10 * 1024 * 1024 }
      const paths = [...everyPath(dir), `${deep}/missing.md`, `${deep}/../c/legit.md`, `${deep}/`, `${deep}/.`]
        .flatMap((path) => [path, NodePath.join(dir, path)])
      const sorted = [...paths].sort()
      const shuffled = paths.map((path, i) => ({ path, key: (i * 7919) % paths.length })).sort((a, b) => a.key - b.key).map((p) => p.path)
      try {
        const expected = new Map(paths.map((path) => [path, answer(readAgentFileSync(path, options))]))
        // Read as planned (sorted: a folder's files in a row; shuffled: the folder changes every read), then off the
        // plan from its middle on (the plan's order left, the rest read the way without it).
        for (const [plan, order] of [[sorted, sorted], [shuffled, shuffled], [sorted, [...sorted.slice(0, 20), ...shuffled]]] as const) {
          const scan = yield* agentFileScan(options, { paths: plan, aheadFrom: 0, helper: "always" })
          for (const path of order) expect(answer(scan(path)), path).toEqual(expected.get(path))
        }
        // The corpus is what it should be: refusals of each kind, and legitimate files read.
        const reasons = new Set([...expected.values()].flatMap((a) => ("refused" in a ? [a.refused] : [])))
        for (const reason of ["kern", "outside", "hard-link", "not-regular", "missing"]) expect(reasons).toContain(reason)
      } finally {
        releaseFifos(dir)
      }
    }), 120_000)

  it.scoped("a folder swapped for a link out while the helper opens its files never leads out", () =>
    Effect.gen(function*() {
      const names = Array.from({ length: 40 }, (_, i) => `n${String(i).padStart(2, "0")}.md`)
      const dir = makeWorkspace(Object.fromEntries(names.map((name) => [`${deep}/${name}`, `${name} inside\n`])))
      const outside = makeOutside()
      for (const name of names) NodeFs.writeFileSync(NodePath.join(outside, name), `${outsideSecret} ${name}\n`)
      const plan = [...names.map((name) => `${deep}/${name}`), `${deep}/key.md`, `${deep}/id_ed25519`]
      const scan = yield* agentFileScan({ roots: [dir], maxBytes: 1024 * 1024 }, { paths: plan, aheadFrom: 0, helper: "always" })
      expect(answer(scan(plan[0]!))).toMatchObject({ text: "n00.md inside\n" })
      // The held folder moves away and a link out takes its name, while the helper may be opening its files.
      NodeFs.renameSync(NodePath.join(dir, deep), NodePath.join(dir, `${deep}-old`))
      NodeFs.symlinkSync(outside, NodePath.join(dir, deep))
      const answers = plan.slice(1).map((path) => answer(scan(path)))
      // Each file is read from the old folder (inside) or refused as outside: never from the link's target.
      expect(JSON.stringify(answers)).not.toContain(outsideSecret)
      for (const a of answers) expect("text" in a ? a.text.endsWith(" inside\n") : a.refused).toBeTruthy()
      expect(answers.at(-1)).toMatchObject({ refused: "outside" })
    }))
})

describe("grep over a deep tree with links and secrets in it", () => {
  it.live("a symlink out of the workspace deep in the tree and .env files in subfolders: no secret shown", () =>
    Effect.gen(function*() {
      const dir = makeWorkspace({
        [`${deep}/legit.md`]: "MARKER legit\n",
        "sub/.env": "MARKER=plain-dotenv-in-a-subfolder\n",
        [`${deep}/.kern/.env`]: `MARKER=${envSecret}\n`
      })
      plantSecrets(dir)
      NodeFs.appendFileSync(NodePath.join(dir, ".kern", ".env"), "MARKER=kern-env\n")
      const outside = makeOutside()
      NodeFs.appendFileSync(NodePath.join(outside, "key.md"), "MARKER outside\n")
      NodeFs.symlinkSync(NodePath.join(outside, "key.md"), NodePath.join(dir, deep, "link-out.md"))
      NodeFs.symlinkSync(outside, NodePath.join(dir, deep, "folder-out"))
      NodeFs.symlinkSync(NodePath.join(dir, ".kern", ".env"), NodePath.join(dir, deep, ".env"))
      NodeFs.linkSync(NodePath.join(dir, ".kern", ".env"), NodePath.join(dir, "sub", "deeper.env"))
      const out = yield* grep({ pattern: "MARKER" }).pipe(inSession(), Effect.provide(toolsLayer(dir, {}, { memoryDb: true })))
      const lines = out.text.split("\n")
      // A plain .env of a subfolder is a file like any other (as before); the links and .kern/ folders are not searched.
      expect(lines.slice(0, 2)).toEqual([`${deep}/legit.md:1:MARKER legit`, "sub/.env:1:MARKER=plain-dotenv-in-a-subfolder"])
      expect(out.matches).toBe(2)
      // The hard link to .kern/.env is named as not searched, its text never shown.
      expect(lines.at(-1)).toContain("sub/deeper.env")
      expect(out.text).not.toContain("kern-env")
      expect(leaked(out.text)).toEqual([])
      // Named directly, each link is refused as before.
      for (const path of [`${deep}/link-out.md`, `${deep}/folder-out/key.md`, `${deep}/.env`, "sub/deeper.env"]) {
        const refused = yield* grep({ pattern: "MARKER", path }).pipe(inSession(), Effect.provide(toolsLayer(dir, {}, { memoryDb: true })), Effect.flip)
        expect(refused.message, path).not.toContain("MARKER")
      }
    }), 60_000)
})
