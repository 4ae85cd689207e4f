#!/usr/bin/env node
// CommonJS (bin/package.json), which node starts a few milliseconds sooner than an ES module.
const NodeFs = require("node:fs")
const { createRequire } = require("node:module")
const NodePath = require("node:path")
const Vm = require("node:vm")

const dist = NodePath.join(__dirname, "..", "dist")

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

/**
 * Loads a CommonJS bundle of dist/ with V8's code cache beside it (`<file>.v8cache`), so a command run again and again
 * does not compile its code each time. A missing or stale cache (another node) is written again when the process
 * exits; a folder kern cannot write to only means no cache.
 */
const loadCached = (file) => {
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

const missingBuild = (error) => {
  if (error && ["ERR_MODULE_NOT_FOUND", "MODULE_NOT_FOUND", "ENOENT"].includes(error.code) && String(error.message).includes("dist")) {
    process.stderr.write("kern: the build is missing; run `npm run build` in the kern repo\n")
    process.exit(1)
  }
  throw error
}

const argv = process.argv.slice(2)
// `kern sessions list` has a bundle of its own (src/quick.ts); it hands back anything it does not know.
let taken = false
// `kern --help`, `kern <command> --help` and `kern` alone: texts the build rendered with the full CLI (src/quick/help.ts).
if (argv.length === 0 || argv.includes("--help") || argv.includes("-h") || argv.length === 1) {
  try {
    taken = require(NodePath.join(dist, "quickHelp.cjs")).run(argv, NodePath.join(dist, "help.json"))
  } catch (error) {
    missingBuild(error)
  }
}
if (!taken && argv[0] === "sessions" && argv[1] === "list") {
  try {
    // The listing the last ask kept while nothing it read has changed (src/quick/sessionsAsk.ts): plain code, a few KB.
    taken = require(NodePath.join(dist, "quickSessionsAsk.cjs")).run(argv)
    // quick.cjs loads dist/quickNames.cjs (the users' names) the same way, when a session is not the operator's.
    if (!taken) taken = loadCached(NodePath.join(dist, "quick.cjs")).run(argv, loadCached)
  } catch (error) {
    missingBuild(error)
  }
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
// `kern chat -m …` through a running agent has one too (src/quick/chat.ts); it starts the full CLI when no agent serves
// the folder (the turn then runs in this process) or when the command line is not one it parses for sure.
// The full CLI (any other command) is one CommonJS bundle with a code cache too (dist/main.cjs).
const full = () => {
  writeCaches()
  runtimeFlags()
  try {
    loadCached(NodePath.join(dist, "main.cjs"))
  } catch (error) {
    missingBuild(error)
  }
}
// A chat with no agent serving the folder runs its turn here from a CommonJS bundle with a code cache
// (src/quick/chatLocal.ts); a command line it does not take goes on to the full CLI.
const chatLocal = () => {
  writeCaches()
  runtimeFlags()
  try {
    if (!loadCached(NodePath.join(dist, "quickChatLocal.cjs")).run(argv, full)) full()
  } catch (error) {
    missingBuild(error)
  }
}
// `kern status` too (src/quick/status.ts).
const quickBundles = { chat: "quickChat.cjs", status: "quickStatus.cjs" }
// A chat no running agent can serve (none of the files it is found by is there: src/quick/chatProbe.ts) starts on its turn.
if (!taken && argv[0] === "chat") {
  try {
    if (require(NodePath.join(dist, "quickChatProbe.cjs")).run(argv) === "local") {
      taken = true
      chatLocal()
    }
  } catch (error) {
    missingBuild(error)
  }
}
if (!taken && Object.hasOwn(quickBundles, argv[0])) {
  // A chat client allocates a few MiB as it starts (the bundle's schemas), most of which lives on, and little after. V8
  // doubles its young generation whenever a scavenge finds most objects alive, so it grew to 16 MiB for that: a sixth
  // of a chat's peak RSS. Kept at its first size, the survivors go to the old generation where they belong. `kern
  // status` is not held to a peak RSS but to its time, which the scavenges of a young generation kept small add to.
  if (argv[0] === "chat") require("node:v8").setFlagsFromString("--semi-space-growth-factor=1")
  const quick = () => loadCached(NodePath.join(dist, quickBundles[argv[0]])).run(argv, full, chatLocal)
  try {
    // A running agent makes `kern status` itself (src/quick/statusAsk.ts); anything it leaves goes on to quickStatus.cjs.
    taken = argv[0] === "status" && loadCached(NodePath.join(dist, "quickStatusAsk.cjs")).run(argv, () => {
      try {
        if (!quick()) full()
      } catch (error) {
        missingBuild(error)
      }
    })
    if (!taken) taken = quick()
  } catch (error) {
    missingBuild(error)
  }
}
if (!taken) full()
