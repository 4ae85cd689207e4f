import { describe, expect, it } from "@effect/vitest"
import { answer, appendLines, header, makeAgentDir, sessionPath, user } from "../recall/harness.js"
import { runKernIn } from "../support/inProcessCli.js"
import { writeFiles } from "../support/tempDir.js"

const session = "20260101-100000-000-aaaa"
const tail = "and the spare key is under the third flowerpot"

/** An agent folder with one past conversation whose answer is far longer than a search listing shows. */
const agentWithLongAnswer = () => {
  const dir = makeAgentDir()
  writeFiles(dir, { ".kern/config.json": JSON.stringify({ model: "m", embeddingModel: false }) })
  appendLines(
    sessionPath(dir, session),
    header(session),
    user("where did we leave the heron notes?", "2026-01-10T09:00:00.000Z"),
    answer(`The heron notes are in the shed. ${"Heron field notes, page after page. ".repeat(120)}${tail}.`, "2026-01-10T09:00:01.000Z")
  )
  return dir
}

describe("kern recall show", () => {
  it("a search hit cut short names the command that prints it whole, and that command does", async () => {
    const dir = agentWithLongAnswer()
    const reindex = await runKernIn(["recall", "reindex", dir])
    expect(reindex.status, reindex.stderr).toBe(0)

    const search = await runKernIn(["recall", "search", "heron notes", dir])
    expect(search.status, search.stderr).toBe(0)
    expect(search.stdout).not.toContain(tail)
    const hint = /\[(\d+) more characters: (kern recall show \S+ \d+-\d+ \S+) prints them whole\]/.exec(search.stdout)
    expect(hint, search.stdout).not.toBeNull()
    expect(hint![2]).toBe(`kern recall show ${session} 0-1 ${dir}`)

    // The exact command the hit printed, as a user would paste it.
    const shown = await runKernIn(hint![2]!.split(" ").slice(1))
    expect(shown.status, shown.stderr).toBe(0)
    expect(shown.stdout).toContain("[0] user (2026-01-10 09:00):\nwhere did we leave the heron notes?")
    expect(shown.stdout).toContain(`${tail}.`)

    const json = JSON.parse((await runKernIn(["recall", "show", session, "1", dir, "--json"])).stdout)
    expect(json).toMatchObject({ sessionId: session, nextMessageStart: null })
    expect(json.messages.map((m: { index: number }) => m.index)).toEqual([1])
  })

  it("a range that is not one, or that names nothing indexed, says so", async () => {
    const dir = agentWithLongAnswer()
    expect((await runKernIn(["recall", "reindex", dir])).status).toBe(0)
    const bad = await runKernIn(["recall", "show", session, "5-2", dir])
    expect(bad.status).toBe(2)
    expect(bad.stderr).toContain(`"5-2" is not a message range`)
    expect(bad.stderr).toMatch(/^Usage: kern recall show /m)
    const none = await runKernIn(["recall", "show", "nosuch", "0-3", dir])
    expect(none.status).toBe(1)
    expect(none.stderr.trim()).toBe(`kern: no indexed messages 0–3 in session "nosuch"`)
  })
})
