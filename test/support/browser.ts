import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"

/** Debian's chromium (installed by .ci/run); playwright-core drives it over CDP without downloading a browser. */
export const chromiumPath = "/usr/bin/chromium"

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })

/** Screenshots go to test-output/ui/ (gitignored) for a person to look at. */
export const screenshotDir = NodePath.resolve(import.meta.dirname, "../../test-output/ui")

export const screenshot = async (page: Page, name: string): Promise<string> => {
  NodeFs.mkdirSync(screenshotDir, { recursive: true })
  const path = NodePath.join(screenshotDir, `${name}.png`)
  await page.screenshot({ path, fullPage: false })
  return path
}

/** Collects what the page complains about: console errors (a CSP violation is one) and uncaught exceptions. */
export const watchPageErrors = (page: Page): ReadonlyArray<string> => {
  const errors: Array<string> = []
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text())
  })
  page.on("pageerror", (error) => errors.push(String(error)))
  return errors
}
