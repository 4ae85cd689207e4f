import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { startServer } from "../channels/web/harness.js"
import { FakeReply, type RecordedRequest } from "../support/fakeModelServer.js"
import { offeredTools, toolResultsById } from "../support/modelRequests.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { eventually } from "../support/waitFor.js"
import { skillMd } from "./support.js"

/** The system prompt a recorded Chat Completions request carried. */
const systemOf = (request: RecordedRequest | undefined): string => {
  const messages = (request?.body as { readonly messages?: ReadonlyArray<{ readonly role: string; readonly content: unknown }> }).messages ?? []
  const system = messages.find((m) => m.role === "system")?.content
  return typeof system === "string" ? system : JSON.stringify(system ?? "")
}

const skillsBlock = (system: string) => /<skills>\n[\s\S]*?\n<\/skills>/.exec(system)?.[0]

describe("skills in a turn", () => {
  it.live("read_skill and <skills> only while a valid skill exists; an added, changed or removed skill counts from the next message", () =>
    Effect.scoped(Effect.gen(function*() {
      const { dir, model, runtime } = yield* startServer({ config: { recall: false } })
      const send = (text: string) => runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text })

      // No skills (an invalid one does not count): neither the tool nor the section.
      writeFiles(dir, { "skills/broken/SKILL.md": "no front matter" })
      yield* model.reply(FakeReply.text("one"))
      yield* send("first")
      const [first] = yield* model.awaitRequests(1)
      expect(offeredTools(first!.body)).not.toContain("read_skill")
      expect(systemOf(first)).not.toContain("<skills>")

      // Added: offered and listed (name and description only), and the model reads it.
      writeFiles(dir, {
        "skills/pdf-forms/SKILL.md": skillMd("pdf-forms", "Fill PDF forms.", "# Fill\nRun scripts/fill.py on the form."),
        "skills/pdf-forms/scripts/fill.py": "print('fill')\n"
      })
      yield* model.reply(FakeReply.toolCalls([{ id: "s1", name: "read_skill", args: { name: "pdf-forms" } }]), FakeReply.text("two"))
      yield* send("fill the form")
      const requests = yield* model.awaitRequests(3)
      expect(offeredTools(requests[1]!.body)).toContain("read_skill")
      const block = skillsBlock(systemOf(requests[1]))
      expect(block).toContain("pdf-forms: Fill PDF forms.")
      expect(block).not.toContain("Run scripts/fill.py")
      expect(block).not.toContain("broken")
      const result = toolResultsById(requests[2]!.body)["s1"]
      expect(result).toContain("Run scripts/fill.py on the form.")
      expect(result).toContain("scripts/fill.py (14 B)")

      // Changed: the next message sees the new description.
      writeFiles(dir, { "skills/pdf-forms/SKILL.md": skillMd("pdf-forms", "Fill and sign PDF forms.") })
      yield* model.reply(FakeReply.text("three"))
      yield* send("again")
      const third = (yield* model.awaitRequests(4))[3]
      expect(skillsBlock(systemOf(third))).toContain("pdf-forms: Fill and sign PDF forms.")

      // Removed: gone from the next message.
      NodeFs.rmSync(NodePath.join(dir, "skills", "pdf-forms"), { recursive: true })
      yield* model.reply(FakeReply.text("four"))
      yield* send("and now")
      const fourth = (yield* model.awaitRequests(5))[4]
      expect(offeredTools(fourth!.body)).not.toContain("read_skill")
      expect(systemOf(fourth)).not.toContain("<skills>")
    })))

  it.live("the agent writes a new skill with write: it is committed like other memory and listed from the next message", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = NodePath.join(makeTempDir(), "agent")
      const git = (...args: ReadonlyArray<string>) =>
        NodeChildProcess.execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir, encoding: "utf8" })
      writeFiles(dir, { "AGENTS.md": "# agents\n" })
      git("init", "-q", "-b", "main")
      git("add", "AGENTS.md")
      git("commit", "-q", "-m", "init")
      const { model, runtime } = yield* startServer({ dir, config: { recall: false, autoCommit: true } })
      const content = skillMd("weekly-report", "Write the weekly report.", "Collect the week's notes, then summarize.")
      yield* model.reply(
        FakeReply.toolCalls([{ id: "w1", name: "write", args: { path: "skills/weekly-report/SKILL.md", content } }]),
        FakeReply.text("saved the skill")
      )
      yield* runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "remember how to do the report" })
      const committed = () => {
        try {
          return git("log", "--name-only", "--format=").includes("skills/weekly-report/SKILL.md")
        } catch {
          return false
        }
      }
      expect(yield* eventually(committed)).toBe(true)
      expect(git("show", "HEAD:skills/weekly-report/SKILL.md")).toBe(content)
      yield* model.reply(FakeReply.text("ok"))
      yield* runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "next" })
      const third = (yield* model.awaitRequests(3))[2]
      expect(skillsBlock(systemOf(third))).toContain("weekly-report: Write the weekly report.")
      expect(offeredTools(third!.body)).toContain("read_skill")
    })))
})
