import { FileSystem, Path } from "@effect/platform"
import { Clock, Duration, Effect, Option } from "effect"
import * as NodeCrypto from "node:crypto"
import { type ToolFailure, toolFailure } from "../kernel/ToolFailure.js"
import * as LockFile from "../storage/LockFile.js"
import { privateDirMode } from "../storage/privateFiles.js"
import { type ResolvedPath, Workspace } from "./Workspace.js"

/** A file's lock is held for one read-check-rename, milliseconds; this much waiting means something is stuck. */
const fileLockWait = Duration.seconds(10)
const fileLockPoll = Duration.millis(15)

/**
 * Two locks for changing files. `withLock`: one permit per workspace in this process, so write, edit and bash
 * change the folder one at a time and an edit never interleaves with a command rewriting the same file.
 * `withFile`: a lock on one file across processes (`.kern/locks/<hash of its path>.lock`), held from reading the
 * file to renaming the new content over it, so two processes editing one file (`kern kernel exec edit`, which
 * holds no agent lock, or a runtime and such a command) cannot both base an edit on the same content and lose one.
 */
export class WriteLock extends Effect.Service<WriteLock>()("kern/tools/WriteLock", {
  effect: Effect.gen(function*() {
    const semaphore = yield* Effect.makeSemaphore(1)
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const workspace = yield* Workspace
    const me = yield* LockFile.currentHolder("kern")
    const locksDir = path.join(workspace.root, ".kern", "locks")

    const holdFile = (file: ResolvedPath, tool: string) =>
      Effect.gen(function*() {
        yield* fs.makeDirectory(locksDir, { recursive: true, mode: privateDirMode }).pipe(
          Effect.mapError((error) => toolFailure("UNEXPECTED", `could not create ${locksDir}: ${error.message}`))
        )
        const name = NodeCrypto.createHash("sha256").update(file.path).digest("hex").slice(0, 32)
        const now = yield* Clock.currentTimeMillis
        const holder = { ...me, startedAt: new Date(now).toISOString(), command: `kern ${tool} ${file.display}` }
        yield* LockFile.acquire(path.join(locksDir, `${name}.lock`), holder, { wait: fileLockWait, poll: fileLockPoll }).pipe(
          Effect.provideService(FileSystem.FileSystem, fs),
          Effect.catchTags({
            LockBusy: (busy) =>
              Effect.fail(toolFailure(
                "TIMEOUT",
                `${file.display} is being changed by ${
                  Option.match(busy.holder, { onNone: () => "another process", onSome: (h) => `pid ${h.pid} (${h.command})` })
                } and stayed locked for ${Duration.format(fileLockWait)}; try again`,
                true
              )),
            LockFileError: (error) => Effect.fail(toolFailure("UNEXPECTED", `could not lock ${file.display}: ${error.message}`))
          })
        )
      })

    return {
      withLock: <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => semaphore.withPermits(1)(self),
      withFile: (file: ResolvedPath, tool: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | ToolFailure, R> =>
        Effect.scoped(Effect.zipRight(holdFile(file, tool), self)).pipe(Effect.withSpan("kern.tools.WriteLock.withFile"))
    }
  })
}) {}
