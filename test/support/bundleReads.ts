// bin/kern.js runs its bundles as scripts, not through require: a preload that wants to know which ran watches the
// files read. Shared by the preloads of statusLoads.test.ts and keptOutputs.ts, so a change in how the loader reads
// bundles is made here once.

/**
 * CommonJS preload source that calls `bundleRead(file)` for every file opened to be read (bin/codeCache.js) or read
 * whole. The preload defines `NodeFs` (node:fs) and `bundleRead` before it.
 */
export const bundleReadHooks = `const openSync = NodeFs.openSync
NodeFs.openSync = function (file, ...rest) { bundleRead(file); return openSync.call(this, file, ...rest) }
const readFileSync = NodeFs.readFileSync
NodeFs.readFileSync = function (file, ...rest) { bundleRead(file); return readFileSync.call(this, file, ...rest) }
`
