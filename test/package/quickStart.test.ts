import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { fingerprint } from "../../scripts/buildInputs.mjs"

// README's Quick start is `npm install && npm link --ignore-scripts`: one build, then `kern` on PATH. npm runs the
// package's prepare again whenever it installs the checkout elsewhere (`npm link` without --ignore-scripts, `npx`), so
// prepare builds only when the sources changed; and an install must leave the committed lockfile as it is.

const temp = (prefix: string) => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), prefix))

describe("the Quick start builds kern once", () => {
  it("prepare (`build.mjs --if-changed`) builds nothing when the sources did not change since the last build", () => {
    const out = temp("kern-prepare-")
    try {
      NodeFs.mkdirSync(NodePath.join(out, "dist"))
      NodeFs.writeFileSync(NodePath.join(out, "dist", "inputs.sha256"), fingerprint("."))
      const printed = execFileSync(process.execPath, ["scripts/build.mjs", "--if-changed", "--out", out], { encoding: "utf8" })
      expect(printed).toContain("is up to date with the sources")
      expect(NodeFs.existsSync(NodePath.join(out, "dist", "main.cjs"))).toBe(false)
    } finally {
      NodeFs.rmSync(out, { recursive: true, force: true })
    }
  })

  it("package.json's prepare is the conditional build", () => {
    const pkg = JSON.parse(NodeFs.readFileSync("package.json", "utf8"))
    expect(pkg.scripts.prepare).toContain("--if-changed")
  })

  it("a build's fingerprint changes with any source file, and only then", () => {
    const root = temp("kern-inputs-")
    try {
      NodeFs.mkdirSync(NodePath.join(root, "src", "cli"), { recursive: true })
      NodeFs.writeFileSync(NodePath.join(root, "src", "cli", "a.ts"), "export const a = 1\n")
      NodeFs.writeFileSync(NodePath.join(root, "package.json"), "{}\n")
      const first = fingerprint(root)
      expect(fingerprint(root)).toBe(first)
      expect(fingerprint(root, "with types")).not.toBe(first)
      NodeFs.writeFileSync(NodePath.join(root, "src", "cli", "a.ts"), "export const a = 22\n")
      const edited = fingerprint(root)
      expect(edited).not.toBe(first)
      NodeFs.writeFileSync(NodePath.join(root, "src", "b.ts"), "")
      expect(fingerprint(root)).not.toBe(edited)
    } finally {
      NodeFs.rmSync(root, { recursive: true, force: true })
    }
  })
})

describe("an install leaves the lockfile as committed", () => {
  it("npm resolves the committed package-lock.json to itself", () => {
    const dir = temp("kern-lock-")
    try {
      for (const file of ["package.json", "package-lock.json"]) NodeFs.copyFileSync(file, NodePath.join(dir, file))
      execFileSync(
        "npm",
        ["install", "--package-lock-only", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"],
        { cwd: dir, stdio: "pipe" }
      )
      const after = NodeFs.readFileSync(NodePath.join(dir, "package-lock.json"), "utf8")
      // Equal text, not only equal packages: a platform's optional packages missing from the lock are added by npm.
      expect(after === NodeFs.readFileSync("package-lock.json", "utf8")).toBe(true)
    } finally {
      NodeFs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
