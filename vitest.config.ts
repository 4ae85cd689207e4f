import { defineConfig } from "vitest/config"
import { processFiles } from "./vitest.process.config.js"

/**
 * kern keeps no module-level state (DESIGN.md), so the parallel files share their worker's modules (`isolate: false`):
 * each worker imports effect and kern once instead of once a file, which was most of the suite's time.
 *
 * The files whose subject is real processes racing each other (locks, signals, kill -9, the daemon, the terminal) are
 * `npm run test:process` (vitest.process.config.ts), not part of this run.
 */
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/bench/**", "node_modules/**", "test/**/*.browser.test.ts", ...processFiles],
    // Bounds for a test that is stuck, not for one that is slow: every wait inside a test is for a condition, and a busy
    // machine (load average 6 on 2 cores) may take several times as long as a quiet one.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Two files at a time on this 2-core machine; the files share their worker's modules.
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
    globalSetup: ["test/support/globalSetup.ts"],
    setupFiles: ["test/support/sharedItGuard.ts"]
  }
})
