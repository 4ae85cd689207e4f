/** A pause of `ms` real milliseconds. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `check` until it returns a value, for at most `seconds`. */
export const waitFor = async <A>(what: string, seconds: number, check: () => Promise<A | undefined>): Promise<A> => {
  const until = Date.now() + seconds * 1000
  while (Date.now() < until) {
    const value = await check().catch(() => undefined)
    if (value !== undefined) return value
    await sleep(100)
  }
  throw new Error(`gave up waiting for ${what} after ${seconds} s`)
}
