/** Names that say their value is a secret: config fields (`apiKey`) and environment variables (`GITHUB_TOKEN`). */

const secretWords: ReadonlySet<string> = new Set([
  "key",
  "apikey",
  "token",
  "secret",
  "password",
  "passwd",
  "pwd",
  "credential",
  "credentials",
  "passphrase"
])

/** `apiKey`, `auth_token`, `SLACK_BOT_TOKEN`, `dbPassword`: the last word names a secret (`maxPromptTokens` does not). */
export const isSecretKey = (key: string): boolean => {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== "")
  const last = words[words.length - 1]?.toLowerCase()
  return last !== undefined && secretWords.has(last)
}

/** The shell's working directories: named like a password (`pwd`), holding a path. */
const shellDirectories: ReadonlySet<string> = new Set(["PWD", "OLDPWD"])

/** An environment variable whose name says it holds a secret (`AWS_SECRET_ACCESS_KEY`, `NPM_TOKEN`; not `PWD`). */
export const isSecretVariable = (name: string): boolean => !shellDirectories.has(name) && isSecretKey(name)
