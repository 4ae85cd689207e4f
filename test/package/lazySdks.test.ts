import { describe, expect, it } from "@effect/vitest"
import { chunks, importsOf, loadedWithout } from "../support/chunks.js"

// The provider SDKs are the heaviest code kern ships (@effect/ai-openai's generated schemas and its tokenizer data,
// @effect/ai-anthropic): together about 0.8 s of CPU in every process that loaded them. The built kern loads them only
// when a model that speaks their protocol is built. These checks read the test build the CLI tests run.

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
    const all = chunks()
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
