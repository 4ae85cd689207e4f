import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import sharp from "sharp"
import { initAgentWithModel } from "../support/agentFolder.js"
import { killedAtEnd } from "../support/backgroundAgent.js"
import { runKern } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { makePdf } from "../support/pdfFiles.js"
import { makeTempDir } from "../support/tempDir.js"

// `kern chat --file PATH`: files from the terminal reach the model as the other channels' do (an image as an image
// part, a PDF as its text), one-shot and through a running agent; a wrong path or a file over the caps is said plainly.

const env = { OPENROUTER_API_KEY: "sk-test", OPENAI_API_KEY: "sk-test" }

/** A model that sees (config vision) behind a Chat Completions server that takes no PDF parts: the PDF goes as its text. */
const seeing = { provider: "openai-compatible", model: "my-vlm", vision: ["my-vlm"], apiKeyEnv: "OPENAI_API_KEY" }

const kern = (args: ReadonlyArray<string>, cwd: string) => Effect.promise(() => runKern(args, { cwd, env }))

const sha = (bytes: Uint8Array) => NodeCrypto.createHash("sha256").update(bytes).digest("hex")

const photo = () =>
  Effect.promise(() => sharp({ create: { width: 32, height: 24, channels: 3, background: "#3a7" } }).jpeg().toBuffer()).pipe(
    Effect.map((buffer) => new Uint8Array(buffer))
  )

/** The user lines of the folder's sessions, with what they carried. */
const userLines = (dir: string) => {
  const sessions = NodePath.join(dir, ".kern/sessions")
  return NodeFs.readdirSync(sessions).flatMap((name) =>
    NodeFs.readFileSync(NodePath.join(sessions, name), "utf8").trim().split("\n").map((line) =>
      JSON.parse(line) as { _tag: string; text?: string; attachments?: ReadonlyArray<{ id: string; name: string; kind: string }> }
    )
  ).filter((line) => line._tag === "user")
}

/** A folder beside the agent's with the files to send (paths are the operator's, relative to where kern runs). */
const filesBeside = (files: Record<string, Uint8Array | string>) => {
  const cwd = makeTempDir()
  for (const [name, content] of Object.entries(files)) NodeFs.writeFileSync(NodePath.join(cwd, name), content)
  return cwd
}

describe("kern chat --file", () => {
  it.live("one-shot: a photo reaches the model as an image part and a PDF as its text; both stored and in the session", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL, seeing)
      const image = yield* photo()
      const pdf = makePdf(["Total due 42 EUR"])
      const cwd = filesBeside({ "receipt.jpg": image, "contract.pdf": pdf })
      yield* server.reply(FakeReply.text("A green receipt and a contract for 42 EUR."))
      const result = yield* kern(["chat", dir, "-m", "what are these?", "--file", "receipt.jpg", "--file", "contract.pdf"], cwd)
      expect(result.status, result.stderr).toBe(0)
      expect(result.stdout).toContain("A green receipt and a contract for 42 EUR.")
      const [request] = yield* server.modelRequests
      expect(request!.media.map((part) => ({ type: part.type, mediaType: part.mediaType }))).toEqual([{ type: "image", mediaType: "image/jpeg" }])
      const body = JSON.stringify(request!.body)
      expect(body).toContain("Total due 42 EUR")
      expect(body).toContain("contract.pdf")
      expect(body).toContain("what are these?")
      // Stored by content under .kern/media, referenced (never inlined) by the session's user line.
      for (const bytes of [image, pdf]) expect(NodeFs.existsSync(NodePath.join(dir, ".kern/media", sha(bytes)))).toBe(true)
      const [user] = userLines(dir)
      expect(user!.attachments!.map((file) => ({ name: file.name, kind: file.kind }))).toEqual([
        { name: "receipt.jpg", kind: "image" },
        { name: "contract.pdf", kind: "pdf" }
      ])
      expect(NodeFs.readFileSync(NodePath.join(dir, ".kern/sessions", NodeFs.readdirSync(NodePath.join(dir, ".kern/sessions"))[0]!), "utf8"))
        .not.toContain(Buffer.from(image).toString("base64").slice(0, 40))
    })))

  it.live("a file alone, without -m: its text reaches the model; neither -m nor --file is a usage error", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL, seeing)
      const cwd = filesBeside({ "todo.txt": "buy oat milk\ncall the plumber\n" })
      yield* server.reply(FakeReply.text("Two things to do."))
      const alone = yield* kern(["chat", dir, "--file", "todo.txt"], cwd)
      expect(alone.status, alone.stderr).toBe(0)
      expect(alone.stdout).toContain("Two things to do.")
      const [request] = yield* server.modelRequests
      expect(JSON.stringify(request!.body)).toContain("call the plumber")
      const nothing = yield* kern(["chat", dir], cwd)
      expect(nothing.status).toBe(2)
      expect(nothing.stderr).toContain("kern: nothing to send: give -m TEXT, --file PATH, or both")
    })))

  it.live("a missing path, a directory, a file over media.maxFileBytes, files over maxTurnBytes, an empty or unreadable file: one clear line each, nothing sent", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL, { ...seeing, media: { maxFileBytes: 1000, maxTurnBytes: 1500 } })
      const cwd = filesBeside({ "big.bin": new Uint8Array(1001).fill(7), "a.txt": "a".repeat(800), "b.txt": "b".repeat(800), "empty.txt": "" })
      NodeFs.mkdirSync(NodePath.join(cwd, "photos"))
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, number, string]> = [
        [["--file", "nope.jpg"], 2, "kern: --file nope.jpg: no such file"],
        [["--file", "photos"], 2, "kern: --file photos is a directory; --file takes one file (give it once per file)"],
        [["--file", "big.bin"], 1, "kern: --file big.bin is 1001 bytes; files over 1000 bytes are not taken (config media.maxFileBytes)"],
        [["--file", "a.txt", "--file", "b.txt"], 1, "kern: the --file files are 1600 bytes together; a message may carry 1500 bytes (config media.maxTurnBytes)"],
        [["--file", "empty.txt"], 1, "kern: --file empty.txt is empty"],
        [["--file", "a.txt/inner"], 1, "kern: --file a.txt/inner could not be read: not a directory"]
      ]
      for (const [args, status, line] of cases) {
        const result = yield* kern(["chat", dir, "-m", "look", ...args], cwd)
        expect(result.status, `${args.join(" ")}: ${result.stderr}`).toBe(status)
        expect(result.stderr).toContain(line)
        expect(result.stderr).not.toMatch(/\n\s+at /)
      }
      expect(yield* server.modelRequests).toEqual([])
      expect(NodeFs.existsSync(NodePath.join(dir, ".kern/sessions")) ? userLines(dir) : []).toEqual([])
    })))

  it.live("through a running agent: the files go as POST /message files, the reply streams back; a refused file is said before anything is sent", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL, { ...seeing, media: { maxFileBytes: 100_000 } })
      yield* killedAtEnd(dir)
      const image = yield* photo()
      const cwd = filesBeside({ "plant.jpg": image, "huge.bin": new Uint8Array(100_001) })
      const started = yield* kern(["start", dir], cwd)
      expect(started.status, started.stderr).toBe(0)
      yield* server.reply(FakeReply.text("A healthy plant."))
      const result = yield* kern(["chat", dir, "-m", "how is my plant?", "--file", "plant.jpg", "--json"], cwd)
      expect(result.status, result.stderr).toBe(0)
      const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as { type: string; delta?: string })
      expect(events.filter((event) => event.type === "text-delta").map((event) => event.delta).join("")).toBe("A healthy plant.")
      const [request] = yield* server.modelRequests
      expect(request!.media.map((part) => part.type)).toEqual(["image"])
      expect(JSON.stringify(request!.body)).toContain("how is my plant?")
      expect(NodeFs.existsSync(NodePath.join(dir, ".kern/media", sha(image)))).toBe(true)

      const refused = yield* kern(["chat", dir, "-m", "and this?", "--file", "huge.bin"], cwd)
      expect(refused.status).toBe(1)
      expect(refused.stderr).toContain("kern: --file huge.bin is 100001 bytes; files over 100000 bytes are not taken (config media.maxFileBytes)")
      expect((yield* server.modelRequests).length).toBe(1)
      const stopped = yield* kern(["stop", dir], cwd)
      expect(stopped.status, stopped.stderr).toBe(0)
    })))
})
