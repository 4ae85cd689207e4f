import { defineConfig } from "vitest/config"

// The load test (test/load/*.load.ts): heavy, so never part of `npm test`; `npm run test:load` runs it (.ci/run calls it).
export default defineConfig({
  test: {
    include: ["test/load/**/*.load.ts"],
    testTimeout: 300_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The test forces a garbage collection before measuring what the process keeps.
    poolOptions: { forks: { execArgv: ["--expose-gc"] } }
  }
})
