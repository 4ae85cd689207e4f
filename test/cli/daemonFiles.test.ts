import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { logFrom, rotateLog } from "../../src/cli/daemonFiles.js"
import { atLevel, readLines, renderText } from "../../src/cli/logRecord.js"
import { makeTempDir } from "../support/tempDir.js"

describe("the background agent's log", () => {
  it.effect("rotation copies and truncates past the size, keeping the newest copies, and the writer keeps appending to kern.log", () =>
    Effect.gen(function*() {
      const log = NodePath.join(makeTempDir(), "kern.log")
      // A descriptor opened for appending, as the agent's stderr is.
      const fd = NodeFs.openSync(log, "a")
      NodeFs.writeSync(fd, "one\n")
      expect(yield* rotateLog(log, 100, 2)).toBe(false)
      NodeFs.writeSync(fd, "x".repeat(200) + "\n")
      expect(yield* rotateLog(log, 100, 2)).toBe(true)
      expect(NodeFs.readFileSync(`${log}.1`, "utf8")).toMatch(/^one\nx+\n$/)
      expect(NodeFs.statSync(log).size).toBe(0)
      NodeFs.writeSync(fd, "after\n")
      expect(NodeFs.readFileSync(log, "utf8")).toBe("after\n")
      NodeFs.writeSync(fd, "y".repeat(200) + "\n")
      yield* rotateLog(log, 100, 2)
      NodeFs.writeSync(fd, "z".repeat(200) + "\n")
      yield* rotateLog(log, 100, 2)
      expect(NodeFs.readFileSync(`${log}.1`, "utf8")).toMatch(/^z+\n$/)
      expect(NodeFs.readFileSync(`${log}.2`, "utf8")).toMatch(/^after\ny+\n$/)
      expect(NodeFs.existsSync(`${log}.3`)).toBe(false)
      NodeFs.closeSync(fd)
      expect(yield* logFrom(log, 0)).toBe("")
    }).pipe(Effect.provide(NodeContext.layer)))

  it("--level keeps lines at or above it, and a line without a level goes with the one above", () => {
    const lines = [
      "2026-01-01T00:00:00.000Z INFO serving",
      "2026-01-01T00:00:01.000Z WARN slow",
      "2026-01-01T00:00:02.000Z ERROR boom",
      "    at stack (file.js:1)",
      "2026-01-01T00:00:03.000Z DEBUG detail",
      "plain line"
    ]
    const kept = (level: string | undefined, carried?: string, from = lines) =>
      atLevel(readLines(from, carried).lines, level).map(renderText)
    expect(kept("warn")).toEqual(lines.slice(1, 4))
    expect(kept("error")).toEqual(lines.slice(2, 4))
    expect(kept("debug")).toEqual(lines)
    expect(kept(undefined)).toEqual(lines)
    // Following a log: a continuation at the start of a read belongs to the level carried from the read before.
    expect(kept("error", "ERROR", ["  continued"])).toEqual(["  continued"])
    expect(kept("error", "INFO", ["  continued"])).toEqual([])
  })
})
