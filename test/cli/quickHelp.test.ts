import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { commandDocs } from "../../src/cli/commands.js"
import type { HelpText } from "../../src/cli/helpTexts.js"
import { helpAnswer } from "../../src/quick/help.js"
import { testDist } from "../support/build.js"
import { kernBin, runCollected, runKern } from "../support/cli.js"
import { runKernIn } from "../support/inProcessCli.js"

// `kern --help` and `kern <command> --help` are answered by bin/kern.js from dist/help.json (src/quick/help.ts), which
// the build renders with the full CLI. These tests hold the two together: for every command, plain and coloured, the
// quick answer is the full CLI's, byte for byte; and whatever is not an exact help request still reaches the full CLI.

const texts = (): Record<string, HelpText> => JSON.parse(NodeFs.readFileSync(NodePath.join(testDist, "help.json"), "utf8"))

/** Every command line that asks only for help: `<path> --help`, `<path> -h`, `kern` alone, and the bare groups. */
const helpRequests = (): ReadonlyArray<ReadonlyArray<string>> => {
  const built = texts()
  return Object.keys(commandDocs).flatMap((path) => {
    const words = path === "" ? [] : path.split(" ")
    return [
      [...words, "--help"],
      [...words, "-h"],
      ...(path === "" || built[path]?.bareGroup === true ? [words] : [])
    ]
  })
}

describe("kern --help from the build's rendered texts", () => {
  it("the build rendered every command's help, and no other", () => {
    expect(Object.keys(texts()).sort()).toEqual(Object.keys(commandDocs).sort())
  })

  it("answers every help request exactly as the full CLI prints it, plain and coloured", async () => {
    const built = texts()
    for (const argv of helpRequests()) {
      for (const color of [false, true]) {
        const full = await runKernIn(argv, { color })
        expect(full.status, argv.join(" ")).toBe(0)
        expect(helpAnswer(argv, built, color), `kern ${argv.join(" ")} (color ${color})`).toBe(full.stdout)
      }
    }
  })

  it("leaves everything that is not only a help request to the full CLI", () => {
    const built = texts()
    const others: ReadonlyArray<ReadonlyArray<string>> = [
      ["help"],
      ["frobnicate"],
      ["frobnicate", "--help"],
      ["status"],
      ["status", "--json", "--help"],
      ["--version"],
      ["--version", "--help"],
      ["users"],
      ["kernel", "frobnicate", "--help"],
      ["sessions", "list"],
      ["chat", "-m", "hi"],
      ["--wizard"]
    ]
    for (const argv of others) expect(helpAnswer(argv, built, false), `kern ${argv.join(" ")}`).toBeUndefined()
  })

  it("bin/kern.js prints the help from help.json alone, without the full CLI", async () => {
    // bin/kern.js with only the help bundle and its texts: no dist/main.cjs to fall back on.
    const copy = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-help-"))
    try {
      NodeFs.mkdirSync(NodePath.join(copy, "bin"))
      NodeFs.mkdirSync(NodePath.join(copy, "dist"))
      for (const file of ["kern.js", "codeCache.js", "package.json"]) NodeFs.copyFileSync(NodePath.join(NodePath.dirname(kernBin), file), NodePath.join(copy, "bin", file))
      for (const file of ["quickHelp.cjs", "help.json"]) NodeFs.copyFileSync(NodePath.join(testDist, file), NodePath.join(copy, "dist", file))
      for (const argv of [["--help"], [], ["kernel"], ["runtime-guard", "snapshot", "-h"]]) {
        const quick = await runCollected(process.execPath, [NodePath.join(copy, "bin/kern.js"), ...argv])
        const full = await runKernIn(argv)
        expect(quick, `kern ${argv.join(" ")}`).toEqual({ status: 0, stdout: full.stdout, stderr: "" })
      }
    } finally {
      NodeFs.rmSync(copy, { recursive: true, force: true })
    }
  })

  it("an unknown command still gets the full CLI's error and usage, exit 2", async () => {
    const quick = await runKern(["frobnicate"])
    const full = await runCollected(process.execPath, [NodePath.join(testDist, "main.cjs"), "frobnicate"])
    expect(quick.status).toBe(2)
    expect(quick).toEqual(full)
    expect(quick.stderr).toContain("unknown command 'kern frobnicate'")
  })
})
