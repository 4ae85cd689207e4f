import * as NodePath from "node:path"
import { writeSessionFixture } from "../support/sessionFixture.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

/** The window of `summaryModelAgent`. */
export const summaryAgentMaxContextTokens = 20_000

/**
 * An agent folder over the fake model at `baseURL`, with a separate `summary-model`, a 20,000-token window, no recall,
 * no heartbeat and no commits (unless `config` says otherwise), and a session of `messages` messages (400 by default,
 * ~30k tokens: over the window from the first turn), `sessionId` if given.
 */
export const summaryModelAgent = (
  baseURL: string,
  files: Readonly<Record<string, string>> = {},
  config: Readonly<Record<string, unknown>> = {},
  sessionId?: string,
  messages = 400
): string => {
  const dir = NodePath.join(makeTempDir(), "agent")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({
      provider: "openai",
      model: "test-model",
      summaryModel: "summary-model",
      baseURL,
      maxContextTokens: summaryAgentMaxContextTokens,
      embeddingModel: false,
      recall: false,
      heartbeatInterval: 0,
      autoCommit: false,
      ...config
    }),
    ...files
  })
  writeSessionFixture(dir, messages, sessionId)
  return dir
}
