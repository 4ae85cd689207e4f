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
  const source = NodeFs.readFileSync(file, "utf8")
  const cacheFile = `${file}.v8cache`
  let cachedData
  try {
    cachedData = NodeFs.readFileSync(cacheFile)
  } catch {
    cachedData = undefined
  }
  const script = new Vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
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
