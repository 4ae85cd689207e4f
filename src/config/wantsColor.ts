/** ANSI colour only for a terminal that wants it (https://no-color.org, TERM=dumb, output piped). */
export const wantsColor = (env: Readonly<Record<string, string | undefined>>, isTTY: boolean): boolean =>
  isTTY && (env["NO_COLOR"] ?? "") === "" && env["TERM"] !== "dumb"
