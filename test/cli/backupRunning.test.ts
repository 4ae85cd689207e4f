import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Ref } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { initAgentWithModel } from "../support/agentFolder.js"
import { killedAtEnd, recordedPid } from "../support/backgroundAgent.js"
import { runKern } from "../support/cli.js"
import { FakeReply, makeWith } from "../support/fakeModelServer.js"
import { runKernIn } from "../support/inProcessCli.js"
import { makeTempDir } from "../support/tempDir.js"

// A backup of an agent that is running for real (`kern start`) and answering messages all the while: the archive
// verifies, restores, and the restored agent holds every message answered before the backup started, and goes on
// with that conversation. The doctor, run beside the agent, neither takes its lock nor disturbs it.

const env = { OPENROUTER_API_KEY: "sk-test" }

const git = (dir: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir, encoding: "utf8" })

/** The `msg-…` word of the last user message a model request carries: the fake model answers that one. */
const asked = (body: Record<string, unknown>): string => {
  const messages = (body["messages"] ?? body["input"] ?? []) as ReadonlyArray<{ readonly role?: string }>
  const last = [...messages].reverse().find((message) => message.role === "user")
  return /msg-[a-z0-9]+/.exec(JSON.stringify(last ?? ""))?.[0] ?? "nothing"
}

interface Line {
  readonly _tag: string
  readonly text?: string
}

const sessionLines = (dir: string): ReadonlyArray<Line> => {
  const sessions = NodePath.join(dir, ".kern/sessions")
  return NodeFs.readdirSync(sessions).sort().flatMap((name) =>
    NodeFs.readFileSync(NodePath.join(sessions, name), "utf8").split("\n").filter((line) => line.trim() !== "").flatMap((line) => {
      try {
        return [JSON.parse(line) as Line]
      } catch {
        return [] // a line being written
      }
    })
  )
}

/** Whether the session holds `word` as a user's message followed, somewhere after it, by its answer. */
const answered = (lines: ReadonlyArray<Line>, word: string) => {
  const asked = lines.findIndex((line) => line._tag === "user" && (line.text ?? "").includes(word))
  return asked >= 0 && lines.slice(asked + 1).some((line) => line._tag === "assistant" && line.text === `answer to ${word}`)
}

const settings = (dir: string) => {
  const config = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern/config.json"), "utf8")) as { port: number }
  const token = /KERN_AUTH_TOKEN=(\S+)/.exec(NodeFs.readFileSync(NodePath.join(dir, ".kern/.env"), "utf8"))?.[1] ?? ""
  return { base: `http://127.0.0.1:${config.port}`, token }
}

/** Polls `done` until it holds: the condition the test waits for (a turn answered by another process). */
const waitUntil = (done: () => boolean) =>
  Effect.gen(function*() {
    while (!done()) yield* Effect.sleep("50 millis")
  })

describe("kern backup of a running agent", () => {
  it.live("taken while a real kern agent answers messages: verifies, restores, and the restored agent holds every answer from before it", () =>
    Effect.scoped(Effect.gen(function*() {
      const model = yield* makeWith({ fallback: (body) => FakeReply.text(`answer to ${asked(body)}`) })
      const dir = initAgentWithModel(model.baseURL)
      NodeFs.writeFileSync(NodePath.join(dir, ".gitignore"), ".kern/\n")
      git(dir, "init", "-q")
      git(dir, "add", "-A")
      git(dir, "commit", "-qm", "memory")
      yield* killedAtEnd(dir)
      const started = yield* Effect.promise(() => runKern(["start"], { cwd: dir, env }))
      expect(started.status, started.stderr).toBe(0)
      const pid = recordedPid(dir)
      const { base, token } = settings(dir)
      const post = (text: string) =>
        Effect.promise(async () => {
          const response = await fetch(`${base}/message`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify({ text })
          })
          return response.status
        })

      // Answered before the backup starts.
      const before = Array.from({ length: 8 }, (_, i) => `msg-b${i}`)
      for (const word of before) expect(yield* post(`please answer ${word}`)).toBe(202)
      yield* waitUntil(() => before.every((word) => answered(sessionLines(dir), word)))

      // Messages keep arriving, and are answered, while the backup and the doctor run.
      const sent = yield* Ref.make(0)
      const busy = yield* Effect.fork(Effect.forever(Effect.gen(function*() {
        const n = yield* Ref.getAndUpdate(sent, (k) => k + 1)
        expect(yield* post(`please answer msg-d${n}`)).toBe(202)
        yield* Effect.sleep("20 millis")
      })))
      yield* waitUntil(() => sessionLines(dir).some((line) => line._tag === "assistant" && line.text === "answer to msg-d0"))

      const archive = NodePath.join(makeTempDir(), "running.tar.gz")
      const made = yield* Effect.promise(() => runKern(["backup", dir, "-o", archive], { env }))
      expect(made.status, made.stderr).toBe(0)
      const doctor = yield* Effect.promise(() => runKernIn(["doctor", dir, "--json"], { env }))
      const report = JSON.parse(doctor.stdout) as { checks: ReadonlyArray<{ check: string; level: string; summary: string }> }
      expect(report.checks.find((check) => check.check === "lock")).toMatchObject({ level: "ok", summary: expect.stringContaining(`held by pid ${pid}`) })
      expect(report.checks.find((check) => check.check === "database")?.level).toBe("ok")
      yield* Fiber.interrupt(busy)
      const during = yield* Ref.get(sent)
      expect(during).toBeGreaterThan(1)

      // The agent was not disturbed: it still holds its lock and answers.
      expect(recordedPid(dir)).toBe(pid)
      expect(yield* post("please answer msg-after")).toBe(202)
      yield* waitUntil(() => answered(sessionLines(dir), "msg-after"))

      const verified = yield* Effect.promise(() => runKernIn(["backup", "verify", archive], { env }))
      expect(verified.status, verified.stderr).toBe(0)
      const restored = NodePath.join(makeTempDir(), "restored")
      const back = yield* Effect.promise(() => runKernIn(["restore", archive, "--dir", restored], { env }))
      expect(back.status, back.stderr).toBe(0)
      const lines = sessionLines(restored)
      for (const word of [...before, "msg-d0"]) expect(answered(lines, word), word).toBe(true)
      // Taken at one moment: nothing from after the backup.
      expect(lines.some((line) => (line.text ?? "").includes("msg-after"))).toBe(false)

      // The restored agent goes on with that conversation: its next request carries what was answered before.
      const next = yield* Effect.promise(() => runKern(["chat", "-m", "please answer msg-restored"], { cwd: restored, env }))
      expect(next.status, next.stderr).toBe(0)
      expect(next.stdout).toContain("answer to msg-restored")
      const request = JSON.stringify((yield* model.modelRequests).at(-1)?.body)
      for (const word of before) expect(request).toContain(`please answer ${word}`)
      expect(request).not.toContain("msg-after")

      expect((yield* Effect.promise(() => runKern(["stop"], { cwd: dir, env }))).status).toBe(0)
    })), 240_000)
})
