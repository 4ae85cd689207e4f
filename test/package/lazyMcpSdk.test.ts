import { describe, expect, it } from "@effect/vitest"
import { chunks, importsOf, loadedWithout } from "../support/chunks.js"

// The MCP SDK (with its zod schemas) is imported only when an agent has MCP servers to connect to (src/mcp/sdk.ts):
// `kern --help`, every command and every turn of an agent without `mcpServers` never load it. Reads the test build.

// Survives minification: the SDK's error message and a check only its client makes.
const markers = ["MCP error ${", "Server does not support tools"]
const sdkEntry = (file: string) => /^(client|stdio|streamableHttp|sse|types)-[A-Z0-9]+\.js$/.test(file)

describe("the built kern loads the MCP SDK only to connect to a server", () => {
  it("no chunk reached without the SDK's lazy entries holds the SDK", () => {
    const loaded = loadedWithout("main.js", sdkEntry)
    expect([...loaded].filter((file) => /^(kernel|run|mcp)-/.test(file)).length).toBeGreaterThanOrEqual(3)
    for (const file of loaded) {
      const { source } = importsOf(file)
      for (const marker of markers) expect(source.includes(marker), `${file} holds ${marker}`).toBe(false)
    }
  })

  it("the SDK is in the build, behind those entries", () => {
    const holders = chunks().filter((file) => markers.some((marker) => importsOf(file).source.includes(marker)))
    expect(holders.length).toBeGreaterThan(0)
  })
})
