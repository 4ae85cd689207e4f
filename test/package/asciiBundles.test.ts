import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { testDist } from "../support/build.js"

// bin/kern.js runs each CommonJS bundle from its text (bin/codeCache.js), and node the library's ES modules from theirs.
// One character outside ASCII anywhere in a file (a symbol in a regular expression, an accented name in a dependency's
// license comment) makes V8 hold its whole text at two bytes a character: 16 MB instead of 8 for the full CLI, in
// every kern process, and slower to read.

const bundles = NodeFs.readdirSync(testDist).filter((name) => name.endsWith(".cjs") || name.endsWith(".js"))

/** Where the first byte outside ASCII is, with the text around it: what a failure names. */
const firstNonAscii = (bytes: Buffer): string | undefined => {
  const at = bytes.findIndex((byte) => byte > 0x7f)
  return at === -1 ? undefined : `byte ${at}: ${JSON.stringify(bytes.subarray(Math.max(0, at - 60), at + 20).toString("utf8"))}`
}

describe("the built code is ASCII", () => {
  it("the full CLI, the quick paths and the library are among the files checked", () => {
    for (const name of ["main.cjs", "quickChatLocal.cjs", "quickChat.cjs", "quickStatus.cjs", "index.js"]) expect(bundles).toContain(name)
    expect(bundles.filter((name) => name.startsWith("chunk-")).length).toBeGreaterThan(0)
  })

  it.each(bundles)("%s holds no byte outside ASCII", (name) => {
    expect(firstNonAscii(NodeFs.readFileSync(NodePath.join(testDist, name)))).toBeUndefined()
  })

  it("the dependencies' license comments are kept beside the bundle, and linked from it", () => {
    const legal = NodeFs.readFileSync(NodePath.join(testDist, "main.cjs.LEGAL.txt"), "utf8")
    expect(legal).toContain("formdata-polyfill. MIT License.")
    expect(NodeFs.readFileSync(NodePath.join(testDist, "main.cjs"), "latin1")).toContain("see main.cjs.LEGAL.txt")
  })
})
