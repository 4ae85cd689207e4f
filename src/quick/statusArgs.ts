// The command lines the quick paths of `kern status` answer (src/quick/status.ts, statusAsk.ts), read without the
// command-line framework; any other is left to the full CLI, which explains it.

export interface StatusWords {
  readonly dir: string | undefined
  readonly dirFlag: string | undefined
  readonly json: boolean
}

/** The arguments after `status` when they are `[dir] [--dir <dir>] [--json]` in any order, each once; otherwise none. */
export const statusWords = (argv: ReadonlyArray<string>): StatusWords | undefined => {
  let dir: string | undefined
  let dirFlag: string | undefined
  let json = false
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const value = argv[i + 1]
    if (arg === "--json" && !json) json = true
    else if (arg === "--dir" && dirFlag === undefined && value !== undefined && value !== "" && !value.startsWith("-")) {
      dirFlag = value
      i++
    } else if (arg !== "" && !arg.startsWith("-") && dir === undefined) dir = arg
    else return undefined
  }
  return { dir, dirFlag, json }
}
