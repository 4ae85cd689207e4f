import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodePath from "node:path"
import { screenshot } from "../../support/browser.js"
import { testDist } from "../../support/build.js"
import { makeTempDir, writeFiles } from "../../support/tempDir.js"
import { skillMd } from "../../skills/support.js"
import { startServer } from "./harness.js"
import { loggedInPage, pageErrors } from "./uiPage.js"

// The Context tab against the real server, in real headless Chromium: the next request's <skills> section, labelled,
// with each skill's name and description as the model gets them.

const use = <A>(f: () => Promise<A>) => Effect.promise(f)

describe("web UI: the Context tab shows the skills section", () => {
  it.live("a skills section with each skill's name and description; a new skill shows on the next look", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = NodePath.join(makeTempDir(), "agent")
      writeFiles(dir, {
        "AGENTS.md": "# agents\n",
        "skills/pdf-forms/SKILL.md": skillMd("pdf-forms", "Fill PDF forms.", "SECRET-ISH INSTRUCTIONS stay out of the prompt")
      })
      const server = yield* startServer({ dir, webRoot: NodePath.join(testDist, "web"), config: { recall: false } })
      const { page, errors } = yield* loggedInPage(server.base)
      yield* use(async () => {
        await page.getByRole("button", { name: "Memory", exact: true }).click()
        const dialog = page.getByRole("dialog", { name: "Memory" })
        await dialog.getByRole("tab", { name: "Context" }).click()
        const section = dialog.locator(".ctx-section.ctx-skills")
        await section.waitFor()
        expect(await section.locator(".ctx-kind").textContent()).toBe("skills")
        await section.locator("summary").click()
        expect(await section.locator(".ctx-open").textContent()).toBe("<skills>")
        const body = await section.locator(".ctx-text").textContent()
        expect(body).toContain("pdf-forms: Fill PDF forms.")
        expect(body).not.toContain("SECRET-ISH")
        // The skills come before the tools, and the tools list read_skill.
        const kinds = await dialog.locator(".ctx-section .ctx-kind").allTextContents()
        expect(kinds.indexOf("skills")).toBeLessThan(kinds.indexOf("tools"))
        await screenshot(page, "context-skills")
      })
      writeFiles(dir, { "skills/release-notes/SKILL.md": skillMd("release-notes", "Write release notes.") })
      yield* use(async () => {
        const dialog = page.getByRole("dialog", { name: "Memory" })
        await dialog.getByRole("tab", { name: "Notes" }).click()
        await dialog.getByRole("tab", { name: "Context" }).click()
        const section = dialog.locator(".ctx-section.ctx-skills")
        await section.locator("summary").click()
        await section.locator(".ctx-text", { hasText: "release-notes: Write release notes." }).waitFor()
      })
      expect(pageErrors(errors)).toEqual([])
    })), 180_000)
})
