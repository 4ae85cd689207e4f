import { FileSystem, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { badRequest, notFound } from "./ApiError.js"

const contentTypes: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8"
}

/**
 * Where the built web UI is: `dist/web/` beside the bundle that runs (`dist/main.cjs`, `dist/index.js` and its chunks), or, running
 * from the sources (tests), the repo's `dist/web/`.
 */
export const defaultWebRoot = (): string => {
  const here = NodePath.dirname(fileURLToPath(import.meta.url))
  return NodePath.basename(here) === "dist" ? NodePath.join(here, "web") : NodePath.resolve(here, "../../../dist/web")
}

const notBuiltPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>kern</title></head>
<body><h1>kern</h1><p>The web UI is not built. Run <code>npm run build</code> in the kern repository, then reload.</p>
<p>The HTTP API works without it.</p></body></html>
`

/** `/`: the UI's page, or a short page saying it is not built. */
export const indexPage = (webRoot: string) => htmlPage(webRoot, "index.html")

/** A page of the built UI (`index.html`, `kern serve`'s `host.html`), or a short page saying it is not built. */
export const htmlPage = (webRoot: string, name: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = NodePath.join(webRoot, name)
    const exists = yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false))
    if (!exists) return HttpServerResponse.text(notBuiltPage, { contentType: contentTypes[".html"] })
    return yield* HttpServerResponse.file(file, { contentType: contentTypes[".html"], headers: { "cache-control": "no-cache" } })
  })

/** `/assets/<name>`: a file of the built UI; nothing outside `assets/` is ever reachable. */
export const asset = (webRoot: string, path: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const assets = NodePath.join(webRoot, "assets")
    const relative = yield* Effect.try({
      try: () => decodeURIComponent(path.slice("/assets/".length)),
      catch: () => badRequest("path", "path: not a valid URL path")
    })
    const segments = relative.split("/")
    if (relative === "" || relative.includes("\0") || relative.includes("\\") || segments.some((s) => s === "" || s === "." || s === "..")) {
      return yield* notFound(`no asset ${path}`)
    }
    const file = NodePath.join(assets, ...segments)
    if (!file.startsWith(assets + NodePath.sep)) return yield* notFound(`no asset ${path}`)
    const info = yield* fs.stat(file).pipe(Effect.orElseSucceed(() => undefined))
    if (info === undefined || info.type !== "File") return yield* notFound(`no asset ${path}`)
    const type = contentTypes[NodePath.extname(file)] ?? "application/octet-stream"
    return yield* HttpServerResponse.file(file, { contentType: type, headers: { "cache-control": "no-cache" } }).pipe(
      Effect.mapError(() => notFound(`no asset ${path}`))
    )
  })
