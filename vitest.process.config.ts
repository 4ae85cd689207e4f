import { defineConfig, type UserConfig } from "vitest/config"

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
  "test/cli/chatFiles.test.ts",
  "test/cli/postgresAgent.test.ts",
  "test/host/wakeSources/telegramWakes.test.ts",
  "test/observability/otelChat.test.ts",
  "test/cli/processes.test.ts",
  "test/cli/mcpOrphans.test.ts",
  "test/cli/mcpRunning.test.ts",
  "test/cli/jobsKill.test.ts",
  "test/cli/scheduleKill.test.ts",
  "test/cli/recallRebuild.test.ts",
  "test/cli/sessionLoad.test.ts",
  "test/cli/backupRunning.test.ts",
  "test/context/endToEnd.test.ts",
  "test/runtime/subagentsKill.test.ts",
  "test/runtime/clusterRunners.test.ts",
  "test/host/serve.test.ts",
  "test/host/serveRunners.test.ts",
  "test/host/serveRunnersTelegram.test.ts",
  "test/host/serveWakes.test.ts",
  "test/host/serveClients.test.ts",
  // A corpus of folder states, each asked of real `kern` processes four to six times (the kept outputs of
  // `kern sessions list` and `kern status`), and kern.db's write lock held by another process through a turn.
  "test/quick/sessionsCache.test.ts",
  "test/quick/statusCache.test.ts",
  "test/runtime/busyDatabase.test.ts"
]

/** What both runs share. */
export const sharedTest: NonNullable<UserConfig["test"]> = {
  // Bounds for a test that is stuck, not for one that is slow: every wait inside a test is for a condition, and a busy
  // machine (load average 6 on 2 cores) may take several times as long as a quiet one.
  testTimeout: 120_000,
  hookTimeout: 120_000,
  pool: "forks",
  // Two files at a time on this 2-core machine; the files share their worker's modules.
  poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
  globalSetup: ["test/support/globalSetup.ts", "test/support/postgresSetup.ts"],
  setupFiles: ["test/support/sharedItGuard.ts"]
}

export default defineConfig({ test: { ...sharedTest, include: processFiles } })
