import { defineConfig } from "vitest/config"

/**
 * The files whose subject is a set of real `kern` processes racing each other: locks, signals, kill -9, the daemon,
 * the terminal, the processes bash and MCP servers leave behind, loads of 250,000 messages in a process of their own.
 * They are most of the suite's time while few in number, so `npm run test:process` runs them apart from `npm test`
 * (`.ci/run` runs both). Two files at a time, as everywhere on this 2-core machine: each works in folders of its own
 * and waits for conditions, never for time, so two side by side only take longer.
 */
export const processFiles = [
  "test/cli/daemon.test.ts",
  "test/cli/lock.test.ts",
  "test/cli/run.test.ts",
  "test/cli/chat.test.ts",
  "test/cli/processes.test.ts",
  "test/cli/mcpOrphans.test.ts",
  "test/cli/mcpRunning.test.ts",
  "test/cli/recallRebuild.test.ts",
  "test/cli/sessionLoad.test.ts",
  "test/context/endToEnd.test.ts"
]

export default defineConfig({
  test: {
    include: processFiles,
    // Bounds for a stuck test, not a slow one (see vitest.config.ts).
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
    globalSetup: ["test/support/globalSetup.ts"],
    setupFiles: ["test/support/sharedItGuard.ts"]
  }
})
