// How bin/kern.js loads kern's CommonJS bundles: each with V8's code cache beside it, under the V8 flags kern's runtime
// runs with. A bench that times what a `kern` process runs loads its bundle the same way (test/bench/session.bench.ts).
const NodeFs = require("node:fs")
const { createRequire } = require("node:module")
const NodePath = require("node:path")
const Vm = require("node:vm")

/**
 * The code caches still to write, each once: when the process exits, or when it hands over to the full CLI, which
 * is sooner. V8 rejects a cache made under other flags than the ones it is loaded under, and the full CLI changes
 * them (the young generation's growth below; the tools' regular-expression guard): a one-shot chat, whose client
 * hands over to the full CLI, rewrote quickChat.cjs.v8cache at every exit and compiled the client afresh at every
 * start. Written at the hand-over, it holds what the client ran until then, under the flags it is loaded with.
 */
const pendingCaches = []
const writeCaches = () => {
  for (const write of pendingCaches.splice(0)) write()
}
process.once("exit", writeCaches)

/** What identifies a file's content on disk, short of reading it: a rebuild replaces the bundle with a new file. */
const identity = (stats) => `${stats.ino}:${stats.size}:${stats.mtimeMs}`

const wrapperStart = "(function (exports, require, module, __filename, __dirname) {"
const wrapperEnd = "\n})"

/**
 * The bundle's text inside the function a CommonJS module's code runs in, read into one buffer with the wrapper around
 * it and made a string once. Node keeps an ASCII string that large outside V8's heap (the bundles are ASCII:
 * test/package/asciiBundles.test.ts); the wrapper added to the file's text as strings made V8 copy the whole bundle
 * into its heap beside the text read, where both stayed: 8 MB more for the full CLI in every process.
 */
const wrappedSource = (file) => {
  const fd = NodeFs.openSync(file, "r")
  try {
    const size = NodeFs.fstatSync(fd).size
    const text = Buffer.allocUnsafe(wrapperStart.length + size + wrapperEnd.length)
    text.write(wrapperStart, 0, "latin1")
    let read = 0
    while (read < size) {
      const count = NodeFs.readSync(fd, text, wrapperStart.length + read, size - read, read)
      if (count === 0) break
      read += count
    }
    const end = wrapperStart.length + read
    text.write(wrapperEnd, end, "latin1")
    return text.toString("utf8", 0, end + wrapperEnd.length)
  } finally {
    NodeFs.closeSync(fd)
  }
}

/**
 * Loads a CommonJS bundle with V8's code cache beside it (`<file>.v8cache`), so a command run again and again
 * does not compile its code each time. A missing or stale cache (another node) is written again when the process
 * exits; a folder kern cannot write to only means no cache. Not when the bundle was replaced meanwhile (a rebuild
 * while an agent ran): V8 checks a cache against its source's length only, so a cache of the old bundle beside a new
 * one of the same length would be taken for it.
 */
const loadCached = (file) => {
  // Before the read: a bundle replaced between the two is taken for changed, and only a cache goes unwritten.
  const loaded = identity(NodeFs.statSync(file))
  const source = wrappedSource(file)
  const cacheFile = `${file}.v8cache`
  let cachedData
  try {
    cachedData = NodeFs.readFileSync(cacheFile)
  } catch {
    cachedData = undefined
  }
  const script = new Vm.Script(source, {
    filename: file,
    cachedData
  })
  if (cachedData === undefined || script.cachedDataRejected === true) {
    // After the run, so the functions it compiled are in the cache too.
    pendingCaches.push(() => {
      const temp = `${cacheFile}.${process.pid}.tmp`
      try {
        if (identity(NodeFs.statSync(file)) !== loaded) return
        NodeFs.writeFileSync(temp, script.createCachedData())
        NodeFs.renameSync(temp, cacheFile)
      } catch {
        NodeFs.rmSync(temp, { force: true })
      }
    })
  }
  const module = { exports: {} }
  script.runInThisContext()(module.exports, createRequire(file), module, file, NodePath.dirname(file))
  return module.exports
}

/**
 * The flags of a process that runs kern's runtime, set before its bundle is loaded: its code cache is written at exit,
 * and V8 rejects a cache made under other flags than the ones it is loaded under. The young generation's default
 * growth, and the tools' regular-expression guard (src/tools/regexGuard.ts, which sets them again, to no effect).
 */
const runtimeFlags = () => {
  const v8 = require("node:v8")
  v8.setFlagsFromString("--semi-space-growth-factor=2")
  v8.setFlagsFromString("--enable-experimental-regexp-engine-on-excessive-backtracks")
  v8.setFlagsFromString("--enable-experimental-regexp-engine")
}
module.exports = { loadCached, runtimeFlags, writeCaches }
