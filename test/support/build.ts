import * as NodePath from "node:path"

/**
 * The kern the tests run: built once per test run, before any test file, by `globalSetup.ts` into a folder of its own
 * (never the repo's dist/, which a `kern` started from the repo meanwhile is using).
 */
export const testBuild = NodePath.resolve(import.meta.dirname, "../../test-output/kern")

export const kernBin = NodePath.join(testBuild, "bin/kern.js")

export const testDist = NodePath.join(testBuild, "dist")
