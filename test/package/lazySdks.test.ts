import { describe, expect, it } from "@effect/vitest"
import { bundleModules, evaluatedWithout, lazilyImported } from "../support/moduleGraph.js"

// The provider SDKs are the heaviest code kern ships (@effect/ai-openai's generated schemas and its tokenizer data,
// @effect/ai-anthropic): together about 0.8 s of CPU in every process that evaluated them. The built kern evaluates
// them only when a model that speaks their protocol is built. These checks read the module graph of the test build's
// full CLI (dist/main.cjs), which the CLI tests run.

const modules = bundleModules("main")
const sdks = { "src/model/OpenAiResponses.ts": "node_modules/@effect/ai-openai/", "src/model/AnthropicMessages.ts": "node_modules/@effect/ai-anthropic/" }
const ofSdk = (path: string) => Object.values(sdks).some((prefix) => path.startsWith(prefix))
const sdkModule = (path: string) => Object.hasOwn(sdks, path)

describe("the built kern evaluates the provider SDKs only for a model that speaks their protocol", () => {
  it("no module of any command is the SDKs' unless it is reached through the lazy provider modules", () => {
    const evaluated = evaluatedWithout(modules, "src/main.ts", sdkModule)
    // Every command is among them (chat, run, kernel, …): the walk follows the lazy imports of commands.
    for (const command of ["chat", "run", "kernel", "status", "daemon"]) expect(evaluated.has(`src/cli/${command}.ts`), command).toBe(true)
    expect([...evaluated].filter(ofSdk)).toEqual([])
  })

  it("the lazy provider modules are what brings each SDK in", () => {
    for (const [module, prefix] of Object.entries(sdks)) {
      expect(lazilyImported(modules).has(module), module).toBe(true)
      const holders = Object.keys(modules).filter((path) => path.startsWith(prefix))
      expect(holders.length, prefix).toBeGreaterThan(0)
      const reachable = evaluatedWithout(modules, module, () => false)
      for (const holder of holders) expect(reachable.has(holder), holder).toBe(true)
    }
  })
})
