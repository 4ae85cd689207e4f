/** Whether an error, or one along its `cause` chain (where @effect/sql and @effect/platform keep the original), has a matching `code`. */
const hasCode = (error: unknown, matches: (code: string) => boolean): boolean => {
  let current: unknown = error
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    const code = "code" in current ? current.code : undefined
    if (typeof code === "string" && matches(code)) return true
    current = "cause" in current ? current.cause : undefined
  }
  return false
}

/** A write failed for want of space: ENOSPC / EDQUOT from the file system, SQLITE_FULL from SQLite. */
export const isDiskFull = (error: unknown): boolean =>
  hasCode(error, (code) => code === "ENOSPC" || code === "EDQUOT" || code === "SQLITE_FULL")

/** SQLite gave up waiting for another connection's lock on kern.db. */
export const isDatabaseBusy = (error: unknown): boolean =>
  hasCode(error, (code) => code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))

/** The words a user sees for a full disk, whatever layer hit it. */
export const diskFullText = "disk full (no space left on the device)"

/** What went wrong with a kern.db write, in words: a full disk, a lock held by another process, or the error's own. */
export const storageProblem = (error: { readonly message: string }): string =>
  isDiskFull(error)
    ? diskFullText
    : isDatabaseBusy(error)
    ? "kern.db is busy (another process holds its write lock)"
    : error.message
