/**
 * A count with its noun in the right number: `counted(1, "session")` is "1 session", `counted(3, "session")` "3
 * sessions", `counted(2, "summary", "summaries")` "2 summaries". Numbers are written as given (`toLocaleString` is
 * the caller's choice, through `shown`).
 */
export const counted = (count: number, noun: string, plural = `${noun}s`, shown: string = String(count)): string =>
  `${shown} ${count === 1 ? noun : plural}`
