import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Cause, Effect, Exit, Runtime, Schema } from "effect"
import * as fc from "fast-check"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { ToolFailure } from "../../src/kernel/ToolFailure.js"
import { BashArgs, bash } from "../../src/tools/bash.js"
import { ContextBudgetStatsArgs, contextBudgetStats } from "../../src/tools/contextBudgetStats.js"
import { ContextForTaskArgs, contextForTask } from "../../src/tools/contextForTask.js"
import { EditArgs, edit } from "../../src/tools/edit.js"
import { GlobArgs, glob } from "../../src/tools/glob.js"
import { GrepArgs, grep } from "../../src/tools/grep.js"
import { ReadArgs, read } from "../../src/tools/read.js"
import { RetrieveToolOutputArgs, retrieveToolOutput } from "../../src/tools/retrieveToolOutput.js"
import { SummarizeFileStructureArgs, summarizeFileStructure } from "../../src/tools/summarizeFileStructure.js"
import { WebfetchArgs, webfetch } from "../../src/tools/webfetch.js"
import type { ToolSession } from "../../src/tools/ToolSession.js"
import { WriteArgs, write } from "../../src/tools/write.js"
import { inSession, makeWorkspace, type ToolRequirements, toolsLayer } from "./support.js"
import { inRun } from "../kernel/harness.js"

const root = makeWorkspace({
  "a.txt": "alpha\nbeta\ngamma\n",
  "src/m.ts": "export function f() {}\nexport class C {}\n",
  "notes/n.md": "# Heading\ntext about invoices\n",
  ".gitignore": "ignored/\n"
})
NodeFs.symlinkSync("/etc", NodePath.join(root, "etc-link"))
NodeFs.symlinkSync("loop2", NodePath.join(root, "loop1"))
NodeFs.symlinkSync("loop1", NodePath.join(root, "loop2"))
const layer = toolsLayer(root, { env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" } }, { memoryDb: true })

const paths = fc.oneof(
  fc.constantFrom("a.txt", "src", "src/m.ts", "notes/n.md", ".", "", "../x", "/etc/passwd", "etc-link/hosts", "loop1",
    "loop1/x", "new/dir/file.txt", "a.txt/child", "\u0000", "~", "src/../a.txt", root),
  fc.string({ maxLength: 20 })
)
const patterns = fc.oneof(fc.constantFrom("*", "**/*.ts", "{a,b", "[", "(", "a|b", ".*", "\\", "**"), fc.string({ maxLength: 10 }))

/** Decodes each candidate with the tool's Schema and runs the valid ones: a success or a ToolFailure, never a defect. */
const fuzz = <A, I, O>(
  schema: Schema.Schema<A, I>,
  handler: (args: A) => Effect.Effect<O, ToolFailure, ToolRequirements>,
  biased: fc.Arbitrary<unknown>,
  numRuns = 60
) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<Exclude<ToolRequirements, ToolSession>>()
    const candidates = fc.oneof(Arbitrary.make(schema as Schema.Schema<A, I, never>) as unknown as fc.Arbitrary<unknown>, biased, fc.anything())
    yield* Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(candidates, async (input) => {
          const decoded = Schema.decodeUnknownEither(schema)(input)
          if (decoded._tag === "Left") return
          const exit = await Runtime.runPromiseExit(runtime)(handler(decoded.right).pipe(inSession("fuzz")))
          if (Exit.isFailure(exit)) {
            const failure = Cause.failureOption(exit.cause)
            assert.isTrue(failure._tag === "Some" && failure.value instanceof ToolFailure, Cause.pretty(exit.cause))
          }
        }),
        { numRuns }
      )
    )
  }).pipe(Effect.provide(layer))

const ints = fc.oneof(fc.integer(), fc.constantFrom(0, 1, -1, 2_000, 1e9))

describe("fuzzing tool arguments: a success or a ToolFailure, never a defect", () => {
  it.live("read", () =>
    fuzz(ReadArgs, read, fc.record({ path: paths, offset: ints, limit: ints, mode: fc.constantFrom("preview", "outline", "range", "full", "x"), maxBytes: ints }, { requiredKeys: ["path"] })))
  it.live("write", () => fuzz(WriteArgs, write, fc.record({ path: paths, content: fc.string() })))
  it.live("edit", () =>
    fuzz(EditArgs, edit, fc.record({ path: paths, oldString: fc.oneof(fc.constantFrom("alpha", "a", "\n"), fc.string()), newString: fc.string(), replaceAll: fc.boolean() }, { requiredKeys: ["path", "oldString", "newString"] })))
  it.live("glob", () => fuzz(GlobArgs, glob, fc.record({ pattern: patterns, path: paths }, { requiredKeys: ["pattern"] })))
  it.live("grep", () => fuzz(GrepArgs, grep, fc.record({ pattern: patterns, path: paths, include: patterns }, { requiredKeys: ["pattern"] })))
  it.live("summarize_file_structure", () => fuzz(SummarizeFileStructureArgs, summarizeFileStructure, fc.record({ path: paths })))
  it.live("context_for_task", () =>
    fuzz(ContextForTaskArgs, contextForTask, fc.record({ task: fc.oneof(fc.constantFrom("invoice heading", "the and", "f"), fc.string()), budgetBytes: ints }, { requiredKeys: ["task"] })))
  it.live("context_budget_stats", () => fuzz(ContextBudgetStatsArgs, contextBudgetStats, fc.constant({}), 20))
  it.live("retrieve_tool_output", () =>
    fuzz(RetrieveToolOutputArgs, (args) => inRun(retrieveToolOutput(args)), fc.record({ artifactId: fc.oneof(fc.constantFrom("art_000000000000000000000000", "x"), fc.string()), offset: ints, limit: ints, grep: patterns }, { requiredKeys: ["artifactId"] })))
  it.live("webfetch (no address is reachable: the resolver knows no public host)", () =>
    fuzz(WebfetchArgs, webfetch, fc.record({
      url: fc.oneof(fc.constantFrom("http://127.0.0.1:1/", "https://169.254.169.254/", "ftp://x", "http://[::1]/", "notaurl", "http://localhost:1/x"), fc.webUrl(), fc.string()),
      timeout: ints,
      raw: fc.boolean()
    }, { requiredKeys: ["url"] }), 40))
  it.live("bash (harmless commands, random arguments and timeouts)", () =>
    fuzz(
      BashArgs,
      (args) => bash({ ...args, command: `printf '%s' ${JSON.stringify(args.command).replace(/[$`\\]/g, "")} >/dev/null; true` }),
      fc.record({ command: fc.oneof(fc.constantFrom("true", "exit 3", "echo hi >&2"), fc.string()), timeout: fc.oneof(ints, fc.integer({ min: 1, max: 500 })) }, { requiredKeys: ["command"] }),
      15
    ))
})
