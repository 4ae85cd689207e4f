import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { testDist } from "../support/build.js"

// The provider SDKs are the heaviest code kern ships (@effect/ai-openai's generated schemas and its tokenizer data,
// @effect/ai-anthropic): together about 0.8 s of CPU in every process that loaded them. The built kern loads them only
// when a model that speaks their protocol is built. These checks read the test build the CLI tests run.

/** What a chunk of the build imports: statically (`from"./x.js"`, `import"./x.js"`) and lazily (`import("./x.js")`). */
const importsOf = (file: string) => {
  const source = NodeFs.readFileSync(NodePath.join(testDist, file), "utf8")
  const names = (pattern: RegExp) => [...source.matchAll(pattern)].map((match) => match[1]!)
  return {
    source,
    static: names(/(?:from|import)\s*"\.\/([^"]+\.js)"/g),
    lazy: names(/import\(\s*"\.\/([^"]+\.js)"\s*\)/g)
  }
}

/** The chunks a process loads when it never builds the lazily loaded `skip`: every import but `import()`s of `skip`. */
const loadedWithout = (entry: string, skip: (file: string) => boolean): ReadonlySet<string> => {
  const seen = new Set<string>()
  const visit = (file: string): void => {
    if (seen.has(file)) return
    seen.add(file)
    const { lazy, static: eager } = importsOf(file)
    for (const next of eager) visit(next)
    for (const next of lazy) if (!skip(next)) visit(next)
  }
  visit(entry)
  return seen
}

// Context tag keys are strings, so they survive minification: each names its SDK's client.
const markers = ["@effect/ai-openai/OpenAiClient", "@effect/ai-anthropic/AnthropicClient"]
const sdkModule = (file: string) => /^(OpenAiResponses|AnthropicMessages)-/.test(file)

describe("the built kern loads the provider SDKs only for a model that speaks their protocol", () => {
  it("no chunk of any command is the SDKs' unless it is reached through the lazy provider modules", () => {
    const loaded = loadedWithout("main.js", sdkModule)
    // Every command's chunk is among them (chat, run, kernel, …): the walk follows the lazy imports of commands.
    expect([...loaded].filter((file) => /^(chat|run|kernel|status|daemon)-/.test(file))).toHaveLength(5)
    for (const file of loaded) {
      const { source } = importsOf(file)
      for (const marker of markers) expect(source.includes(marker), `${file} holds ${marker}`).toBe(false)
    }
  })

  it("the lazy provider modules are what brings each SDK in", () => {
    const all = NodeFs.readdirSync(testDist).filter((file) => file.endsWith(".js"))
    const lazyModules = all.filter(sdkModule)
    expect(lazyModules).toHaveLength(2)
    const sources = new Map(all.map((file) => [file, importsOf(file).source]))
    const reachable = lazyModules.flatMap((file) => [...loadedWithout(file, () => false)])
    for (const marker of markers) {
      const holders = all.filter((file) => sources.get(file)!.includes(marker))
      expect(holders).toHaveLength(1)
      expect(reachable).toContain(holders[0])
    }
  })
})
