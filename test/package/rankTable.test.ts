import { describe, expect, it } from "@effect/vitest"
import bpeRanks from "gpt-tokenizer/bpeRanks/o200k_base"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { buildRankTable, serializeRankTable } from "../../src/model/bpeTable.js"
import { rankTableFile } from "../../src/model/tokenizer.js"
import { testDist } from "../support/build.js"

// The build writes the tokenizer's rank table beside the bundles, which count tokens over it instead of evaluating
// gpt-tokenizer's array of ranks (src/model/tokenizer.ts): it must be the table those ranks make, byte for byte.
describe("the build's rank table", () => {
  it("is the table gpt-tokenizer's o200k_base ranks make", () => {
    const built = NodeFs.readFileSync(NodePath.join(testDist, rankTableFile))
    expect(Buffer.compare(built, Buffer.from(serializeRankTable(buildRankTable(bpeRanks))))).toBe(0)
  })
})
