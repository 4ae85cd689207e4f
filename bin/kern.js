#!/usr/bin/env node
// CommonJS (bin/package.json), which node starts a few milliseconds sooner than an ES module.
const NodePath = require("node:path")
const { loadCached, runtimeFlags, writeCaches } = require("./codeCache.js")

const dist = NodePath.join(__dirname, "..", "dist")

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
