import { describe, expect, it } from "@effect/vitest"
import { bundleModules, evaluatedWithout, lazilyImported } from "../support/moduleGraph.js"

// The MCP SDK (with its zod schemas) is imported only when an agent has MCP servers to connect to (src/mcp/sdk.ts):
// `kern --help`, every command and every turn of an agent without `mcpServers` never evaluate it. These checks read
// the module graph of the test build's full CLI (dist/main.cjs).

const modules = bundleModules("main")
const ofSdk = (path: string) => path.startsWith("node_modules/@modelcontextprotocol/sdk/")

describe("the built kern evaluates the MCP SDK only to connect to a server", () => {
  it("no module evaluated without the SDK's lazy entries is the SDK's", () => {
    const evaluated = evaluatedWithout(modules, "src/main.ts", ofSdk)
    for (const command of ["kernel", "run", "mcp"]) expect(evaluated.has(`src/cli/${command}.ts`), command).toBe(true)
    expect([...evaluated].filter(ofSdk)).toEqual([])
  })

  it("the SDK is in the build, behind those entries", () => {
    const entries = [...lazilyImported(modules)].filter(ofSdk)
    expect(entries.length).toBeGreaterThan(0)
    const reachable = new Set(entries.flatMap((entry) => [...evaluatedWithout(modules, entry, () => false)]))
    for (const holder of Object.keys(modules).filter(ofSdk)) expect(reachable.has(holder), holder).toBe(true)
  })
})
