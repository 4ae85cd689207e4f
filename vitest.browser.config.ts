import { defineConfig } from "vitest/config"

// The web UI in real headless Chromium: heavy, so apart from `npm test` (`npm run test:browser`, called by .ci/run).
export default defineConfig({
  test: {
    include: ["test/**/*.browser.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    fileParallelism: false,
    globalSetup: ["test/support/globalSetup.ts"]
  }
})
