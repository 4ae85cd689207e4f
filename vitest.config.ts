import { defineConfig } from "vitest/config"
import { processFiles, sharedTest } from "./vitest.process.config.js"

/**
 * kern keeps no module-level state (DESIGN.md), so the parallel files share their worker's modules (`isolate: false`):
 * each worker imports effect and kern once instead of once a file, which was most of the suite's time.
 *
 * The files whose subject is real processes racing each other (locks, signals, kill -9, the daemon, the terminal) are
 * `npm run test:process` (vitest.process.config.ts), not part of this run.
 */
export default defineConfig({
  test: {
    ...sharedTest,
    include: ["test/**/*.test.ts"],
    exclude: ["test/bench/**", "node_modules/**", "test/**/*.browser.test.ts", ...processFiles]
  }
})
