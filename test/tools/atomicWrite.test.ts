import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { atomicWrite } from "../../src/storage/atomicWrite.js"
import { snapshotOf } from "../../src/storage/fileSnapshot.js"
import { makeWorkspace } from "./support.js"

const fixture = NodePath.join(import.meta.dirname, "fixtures", "atomicWriter.ts")
const size = 96 * 1024 * 1024

/** Only "a" bytes (the old content) or only "b" bytes (the new), and nothing else in the folder but temp files. */
const contentKind = (file: string): string => {
  const bytes = NodeFs.readFileSync(file)
  if (bytes.byteLength === 5 && bytes.toString() === "aaaaa") return "old"
  if (bytes.byteLength === size && bytes.indexOf(0x61) < 0 && bytes.every((b) => b === 0x62)) return "new"
  return `a mix of ${bytes.byteLength} bytes`
}

describe("atomicWrite", () => {
  it.live("a writer killed mid-way leaves the old content, never a mix", () =>
    Effect.gen(function*() {
      const root = makeWorkspace({ "target.bin": "aaaaa" })
      const target = NodePath.join(root, "target.bin")
      // The writer stops half-way through its write and says so; it is killed there.
      const child = NodeChildProcess.spawn(process.execPath, ["--import", "tsx", fixture, target, String(size)], {
        stdio: ["ignore", "pipe", "inherit"]
      })
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      const writing = yield* Effect.promise(() =>
        Promise.race([
          new Promise<boolean>((resolve) => {
            let seen = ""
            child.stdout.on("data", (chunk: Buffer) => {
              seen += chunk.toString("utf8")
              if (seen.includes("writing\n")) resolve(true)
            })
          }),
          exited.then(() => false)
        ])
      )
      assert.isTrue(writing, "the writer ended before it was half-way through its write")
      assert.isTrue(NodeFs.readdirSync(root).some((name) => name.endsWith(".kern-tmp")), "no temporary file mid-write")
      child.kill("SIGKILL")
      yield* Effect.promise(() => exited)
      assert.strictEqual(contentKind(target), "old")
    }))

  it.effect("a completed write replaces the content and leaves no temporary file", () =>
    Effect.gen(function*() {
      const root = makeWorkspace({ "t.txt": "old" })
      yield* atomicWrite(NodePath.join(root, "t.txt"), new TextEncoder().encode("new content"))
      assert.strictEqual(NodeFs.readFileSync(NodePath.join(root, "t.txt"), "utf8"), "new content")
      assert.deepStrictEqual(NodeFs.readdirSync(root), ["t.txt"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a failed write removes its temporary file and keeps the target", () =>
    Effect.gen(function*() {
      const root = makeWorkspace({ "dir/keep.txt": "x" })
      const error = yield* atomicWrite(NodePath.join(root, "dir"), new TextEncoder().encode("y")).pipe(Effect.flip)
      assert.strictEqual(error._tag, "SystemError")
      assert.deepStrictEqual(NodeFs.readdirSync(root), ["dir"])
      assert.deepStrictEqual(NodeFs.readdirSync(NodePath.join(root, "dir")), ["keep.txt"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("with an expectation, a target that changed (or appeared) before the rename is refused and kept", () =>
    Effect.gen(function*() {
      const root = makeWorkspace({ "t.txt": "what the edit read" })
      const target = NodePath.join(root, "t.txt")
      const seen = snapshotOf(NodeFs.readFileSync(target))
      NodeFs.writeFileSync(target, "what someone wrote since")
      const changed = yield* atomicWrite(target, new TextEncoder().encode("the edit"), seen).pipe(Effect.flip)
      assert.strictEqual(changed._tag, "TargetChanged")
      assert.strictEqual(NodeFs.readFileSync(target, "utf8"), "what someone wrote since")
      const appeared = yield* atomicWrite(target, new TextEncoder().encode("a new file"), "absent").pipe(Effect.flip)
      assert.strictEqual(appeared._tag, "TargetChanged")
      assert.strictEqual(NodeFs.readFileSync(target, "utf8"), "what someone wrote since")
      assert.deepStrictEqual(NodeFs.readdirSync(root), ["t.txt"])
      yield* atomicWrite(target, new TextEncoder().encode("the edit"), snapshotOf(NodeFs.readFileSync(target)))
      assert.strictEqual(NodeFs.readFileSync(target, "utf8"), "the edit")
    }).pipe(Effect.provide(NodeContext.layer)))
})
