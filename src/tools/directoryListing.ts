import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import * as NodePath from "node:path"
import { fileFailure } from "./failures.js"
import { formatBytes } from "./textFile.js"

/** `name/` for folders, `name (size)` for files, sorted, folders first; `offset`/`limit` page through entries. */
export const listDirectory = Effect.fn("kern.tools.listDirectory")(function*(
  dir: string,
  display: string,
  offset: number,
  limit: number
) {
  const fs = yield* FileSystem.FileSystem
  const names = yield* fs.readDirectory(dir).pipe(Effect.mapError(fileFailure(display)))
  const entries = yield* Effect.forEach(
    names,
    (name) =>
      fs.stat(NodePath.join(dir, name)).pipe(
        Effect.map((info) => ({ name, directory: info.type === "Directory", size: Number(info.size) })),
        // A dangling symlink or a file removed meanwhile is still listed, without a size.
        Effect.orElseSucceed(() => ({ name, directory: false, size: -1 }))
      ),
    { concurrency: 16 }
  )
  entries.sort((a, b) => (a.directory === b.directory ? a.name.localeCompare(b.name) : a.directory ? -1 : 1))
  const page = entries.slice(offset - 1, offset - 1 + limit)
  const lines = page.map((entry) =>
    entry.directory ? `${entry.name}/` : entry.size < 0 ? `${entry.name} (unreadable)` : `${entry.name} (${formatBytes(entry.size)})`
  )
  const header = `${display}/ (${entries.length} entries)`
  const more = offset - 1 + page.length < entries.length
    ? [`[showing entries ${offset}–${offset - 1 + page.length}; continue with offset ${offset + page.length}]`]
    : []
  return [header, ...lines, ...more].join("\n")
})
