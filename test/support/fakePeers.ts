import type { FakeSlack } from "./fakeSlack.js"
import type { FakeTelegram } from "./fakeTelegram.js"

/** The environment of a real kern whose model key is a test one and whose Telegram and Slack are the fake servers. */
export const fakePeersEnv = (telegram: FakeTelegram, slack: FakeSlack) => ({
  OPENROUTER_API_KEY: "sk-test",
  TELEGRAM_BOT_TOKEN: telegram.token,
  TELEGRAM_API_ROOT: telegram.root,
  SLACK_BOT_TOKEN: slack.botToken,
  SLACK_APP_TOKEN: slack.appToken,
  SLACK_API_URL: slack.apiUrl
})
