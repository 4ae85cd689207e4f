import { describe, expect, it } from "@effect/vitest"
import { memoryPath } from "../../src/mcp/memoryServer.js"

describe("read_memory's paths", () => {
  it("reads files and lists the folders under knowledge/ and notes/ only", () => {
    expect(memoryPath("notes/2026-11-20.md")).toEqual({ file: "notes/2026-11-20.md" })
    expect(memoryPath("knowledge/infra/hosts.md")).toEqual({ file: "knowledge/infra/hosts.md" })
    expect(memoryPath("./knowledge/a/../hosts.md")).toEqual({ file: "knowledge/hosts.md" })
    expect(memoryPath("notes/")).toEqual({ folder: "notes" })
    expect(memoryPath("knowledge")).toEqual({ folder: "knowledge" })
  })

  it("refuses every name that leaves them", () => {
    for (const path of [
      "", " ", ".kern/.env", "knowledge/../.kern/.env", "notes/../../etc/passwd", "../agent/.kern/.env", "/etc/passwd",
      "/tmp/agent/knowledge/x.md", "knowledge\\..\\.kern\\.env", "C:\\x", "AGENTS.md", "shared/x.md", "knowledgex/a.md",
      "notes\0/x", ".", "..", "knowledge/../..", "Knowledge/x.md"
    ]) {
      expect(memoryPath(path), JSON.stringify(path)).toHaveProperty("refused")
    }
  })
})
