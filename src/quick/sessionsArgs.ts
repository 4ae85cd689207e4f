// The command lines the quick paths of `kern sessions list` answer (src/quick.ts, src/quick/sessionsAsk.ts), read
// without the command-line framework; any other is left to the full CLI, which explains it.

export interface ListWords {
  readonly dir: string | undefined
  readonly dirFlag: string | undefined
  readonly json: boolean
  readonly conversation: string | undefined
}

/**
 * The arguments after `sessions list` when they are `[dir] [--dir <dir>] [--json] [--conversation <id>]` in any order
 * (one folder); otherwise none.
 */
export const listWords = (argv: ReadonlyArray<string>): ListWords | undefined => {
  let dir: string | undefined
  let dirFlag: string | undefined
  let json = false
  let conversation: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const value = argv[i + 1]
    if (arg === "--json" && !json) json = true
    else if (arg === "--dir" && dirFlag === undefined && value !== undefined && !value.startsWith("-")) {
      dirFlag = value
      i++
    } else if (arg === "--conversation" && conversation === undefined && value !== undefined && !value.startsWith("-")) {
      conversation = value
      i++
    } else if (!arg.startsWith("-") && dir === undefined) dir = arg
    else return undefined
  }
  // Two folders is a usage mistake: the full CLI explains it, with the command's usage.
  if (dir !== undefined && dirFlag !== undefined && dir !== dirFlag) return undefined
  return { dir, dirFlag, json, conversation }
}
