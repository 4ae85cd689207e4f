import { defineConfig } from "vitest/config"

/**
 * kern keeps no module-level state (DESIGN.md), so the parallel files share their worker's modules (`isolate: false`):
 * each worker imports effect and kern once instead of once a file, which was most of the suite's time.
 *
 * Files whose subject is a set of real processes racing each other (locks, signals, kill -9, the daemon, the terminal,
 * loads of 250,000 messages): they run after the rest, in a group of their own, so that the in-process files never
 * share the machine with their bursts of processes. Within the group, as everywhere, two files run at a time (this is a
 * 2-core machine): each file works in folders of its own and waits for conditions, never for time, so two of them side
 * by side only take longer. On a machine other work keeps busy, two files at a time also get twice the share of it.
 */
const alone = [
  "test/cli/daemon.test.ts",
  "test/cli/lock.test.ts",
  "test/cli/run.test.ts",
  "test/cli/chat.test.ts",
  "test/cli/sessionLoad.test.ts",
  "test/context/endToEnd.test.ts"
]

const excluded = ["test/bench/**", "node_modules/**", "test/**/*.browser.test.ts"]

export default defineConfig({
  test: {
    // Bounds for a test that is stuck, not for one that is slow: every wait inside a test is for a condition, and a busy
    // machine (load average 6 on 2 cores) may take several times as long as a quiet one.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    // The pool reads isolation from here, not from a project: the parallel files share their worker's modules.
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
    globalSetup: ["test/support/globalSetup.ts"],
    setupFiles: ["test/support/sharedItGuard.ts"],
    projects: [
      {
        extends: true,
        test: { name: "parallel", include: ["test/**/*.test.ts"], exclude: [...excluded, ...alone] }
      },
      {
        extends: true,
        test: {
          name: "alone",
          include: alone,
          exclude: excluded,
          sequence: { groupOrder: 1 }
        }
      }
    ]
  }
})
