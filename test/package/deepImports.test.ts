import { describe, expect, it } from "@effect/vitest"
import { deepen } from "../../scripts/deepImports.mjs"

// The quick bundles import each effect module by its own path (scripts/deepImports.mjs), so that a package's index,
// evaluated whole where a bundle loads a part later, is never imported.
describe("deepen", () => {
  it("imports each named module by its own path; types are left out, aliases kept", () => {
    expect(deepen(`import { Effect, type Scope, Option as O } from "effect"\nconst x = 1`)).toBe(
      `import * as Effect from "effect/Effect"; import * as O from "effect/Option"\nconst x = 1`
    )
  })

  it("takes effect's functions from effect/Function", () => {
    expect(deepen(`import { pipe, Schema } from "effect"`)).toBe(
      `import { pipe as pipe } from "effect/Function"; import * as Schema from "effect/Schema"`
    )
  })

  it("reads an import over several lines, of @effect/platform and @effect/sql too", () => {
    expect(deepen(`import {\n  FileSystem,\n  HttpClient,\n} from "@effect/platform"\nimport { SqlClient } from "@effect/sql"`)).toBe(
      `import * as FileSystem from "@effect/platform/FileSystem"; import * as HttpClient from "@effect/platform/HttpClient"\nimport * as SqlClient from "@effect/sql/SqlClient"`
    )
  })

  it("leaves deep imports, type-only imports and other packages as they are", () => {
    const source = `import * as Effect from "effect/Effect"\nimport type { Layer } from "effect"\nimport { x } from "effect-foo"\nimport { y } from "@effect/platform-node"`
    expect(deepen(source)).toBe(source)
  })
})
