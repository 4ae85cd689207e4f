import { Data, Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/**
 * `.kern/` holds every conversation, the audit log and the secrets: only its owner may enter it. Folders kern makes
 * there are 0700 and files 0600, given at creation (so the umask, even 000, cannot widen them), and a folder made by
 * an older kern or by hand is tightened when a runtime starts.
 */
export const privateDirMode = 0o700
export const privateFileMode = 0o600

/** The modes for creating something under `.kern/`, for the writers that take them. */
export const privateModes = { dir: privateDirMode, file: privateFileMode } as const

export class TightenError extends Data.TaggedError("TightenError")<{ readonly path: string; readonly detail: string }> {
  override get message(): string {
    return `could not make ${this.path} private (chmod 700 for folders, 600 for files): ${this.detail}`
  }
}

const detailOf = (error: unknown) => error instanceof Error ? error.message : String(error)

/**
 * Sets `dir` and everything below it to the private modes. Symlinks are not followed (chmod would change their
 * target, which may be anything), sockets and FIFOs are left as they are. A missing `dir` is nothing to do.
 * Returns what could not be changed; the caller says so.
 */
export const tightenPrivateDir = (dir: string): Effect.Effect<ReadonlyArray<TightenError>> =>
  Effect.promise(async () => {
    const failures: Array<TightenError> = []
    const chmod = (path: string, mode: number) =>
      NodeFs.promises.chmod(path, mode).catch((error: unknown) => {
        failures.push(new TightenError({ path, detail: detailOf(error) }))
      })
    const walk = async (folder: string): Promise<void> => {
      const entries = await NodeFs.promises.readdir(folder, { withFileTypes: true }).catch((error: unknown) => {
        failures.push(new TightenError({ path: folder, detail: detailOf(error) }))
        return []
      })
      await Promise.all(entries.map(async (entry) => {
        const path = NodePath.join(folder, entry.name)
        if (entry.isDirectory()) {
          await chmod(path, privateDirMode)
          await walk(path)
        } else if (entry.isFile()) {
          await chmod(path, privateFileMode)
        }
      }))
    }
    const top = await NodeFs.promises.lstat(dir).catch(() => undefined)
    if (top === undefined || !top.isDirectory()) return failures
    await chmod(dir, privateDirMode)
    await walk(dir)
    return failures
  }).pipe(Effect.withSpan("kern.storage.tightenPrivateDir", { attributes: { dir } }))

/** Creates `file` empty with the private mode if it does not exist, and sets the mode if it does. */
export const ensurePrivateFileSync = (file: string): void => {
  NodeFs.closeSync(NodeFs.openSync(file, "a", privateFileMode))
  NodeFs.chmodSync(file, privateFileMode)
}
