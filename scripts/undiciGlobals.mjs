// An esbuild plugin for every bundle of kern (scripts/esbuild-options.mjs). The undici package's cookie helpers
// (lib/web/cookies/index.js) read `globalThis.Headers` when their module is evaluated, to accept node's own Headers
// objects beside undici's. Node defines that global lazily: the read loads node's built-in copy of undici, 35–45 ms and
// ~4 MiB in every process whose bundle holds the undici package (a one-shot `kern chat`, `kern start`), which needs
// node's fetch only to talk to an MCP server over HTTP (the SDK's transport loads it then). kern never calls undici's
// cookie helpers; their check keeps undici's own Headers.
import { readFile } from "node:fs/promises"

const cookies = /[/\\]node_modules[/\\]undici[/\\]lib[/\\]web[/\\]cookies[/\\]index\.js$/
const lazyGlobalRead = "webidl.brandCheckMultiple([Headers, globalThis.Headers].filter(Boolean))"

/** The cookies module without its read of the lazy global; throws when undici's text changed (review this plugin). */
export const withoutGlobalHeaders = (source, path) => {
  if (!source.includes(lazyGlobalRead)) {
    throw new Error(`${path}: undici's cookies module no longer reads \`${lazyGlobalRead}\`: review scripts/undiciGlobals.mjs`)
  }
  return source.replace(lazyGlobalRead, "webidl.brandCheckMultiple([Headers])")
}

export const undiciGlobals = {
  name: "undici-globals",
  setup(build) {
    build.onLoad({ filter: cookies }, async (args) => ({
      contents: withoutGlobalHeaders(await readFile(args.path, "utf8"), args.path),
      loader: "js"
    }))
  }
}
