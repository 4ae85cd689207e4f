import { Effect } from "effect"
import type { Page } from "playwright-core"
import { launchChromium, watchPageErrors } from "../../support/browser.js"
import { bearer, request } from "./harness.js"

const use = <A>(f: () => Promise<A>) => Effect.promise(f)

/**
 * The web UI of the real server at `base` (startServer with the built dist/web as its webRoot) in real headless
 * Chromium, logged in with a ticket and connected; the browser closes with the caller's scope.
 */
export const loggedInPage = (base: string) =>
  Effect.gen(function*() {
    const browser = yield* Effect.acquireRelease(use(launchChromium), (b) => Effect.promise(() => b.close()))
    const page: Page = yield* use(() => browser.newPage({ viewport: { width: 1100, height: 800 } }))
    const errors = watchPageErrors(page)
    const { url } = (yield* request(`${base}/auth/ticket`, { method: "POST", headers: bearer })).json as { url: string }
    yield* use(async () => {
      await page.goto(url)
      await page.getByText("connected", { exact: true }).waitFor()
    })
    return { page, errors }
  })

/** What the page complained about that is a failure: a CSP violation, an uncaught exception. */
export const pageErrors = (errors: ReadonlyArray<string>) => errors.filter((e) => /Content Security Policy|Uncaught|TypeError|ReferenceError/.test(e))
