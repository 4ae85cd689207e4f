import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import { bytesOf, cosineDistance, dequantize, float32FromBytes, int8FromBytes, norm, quantize } from "../../src/storage/int8Vector.js"
import * as Database from "../../src/storage/Database.js"
import { loadVectorExtension } from "../../src/storage/vectorExtension.js"
import { normalized, seededNormals } from "../support/seededNormals.js"

const vectorOf = (dimensions: number) =>
  fc.array(fc.float({ min: -10, max: 10, noNaN: true, noDefaultInfinity: true }), { minLength: dimensions, maxLength: dimensions })
    .map((values) => Float32Array.from(values))

describe("int8 vectors", () => {
  it("round trip: every value comes back within half a step (scale / 2), with its sign", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 64 }).chain(vectorOf), (vector) => {
        const quantized = quantize(vector)
        const back = dequantize(quantized)
        const max = vector.reduce((m, x) => Math.max(m, Math.abs(x)), 0)
        expect(quantized.scale).toBeCloseTo(max / 127, 6)
        for (let i = 0; i < vector.length; i++) {
          expect(Math.abs(back[i]! - vector[i]!)).toBeLessThanOrEqual(quantized.scale / 2 + 1e-6)
          expect(Math.abs(quantized.values[i]!)).toBeLessThanOrEqual(127)
          if (Math.abs(vector[i]!) > quantized.scale / 2) expect(Math.sign(back[i]!)).toBe(Math.sign(vector[i]!))
        }
      })
    )
  })

  it("the largest value is ±127 exactly; an all-zero vector is zeros with scale 0 (distance 1, never NaN)", () => {
    const { scale, values } = quantize(Float32Array.from([0.5, -1, 0.25]))
    expect([...values]).toEqual([64, -127, 32])
    expect(scale).toBeCloseTo(1 / 127, 9)
    const zero = quantize(new Float32Array(4))
    expect(zero.scale).toBe(0)
    expect([...zero.values]).toEqual([0, 0, 0, 0])
    const query = Float32Array.from([1, 0, 0, 0])
    expect(cosineDistance(query, norm(query), zero.values)).toBe(1)
  })

  it("bytes round trip: float32 from an unaligned blob, int8 from its bytes", () => {
    const vector = Float32Array.from([1.5, -2.25, 3])
    const unaligned = new Uint8Array(13)
    unaligned.set(bytesOf(vector), 1)
    expect([...float32FromBytes(unaligned.subarray(1))]).toEqual([1.5, -2.25, 3])
    const { values } = quantize(vector)
    expect([...int8FromBytes(bytesOf(values))]).toEqual([...values])
  })

  it.effect("the int8 distance agrees with sqlite-vec's float cosine distance, and ranks as it does (real SQLite)", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* loadVectorExtension(yield* SqliteClient.SqliteClient)
      const dimensions = 256
      const gauss = seededNormals(7)
      const query = normalized(Float32Array.from({ length: dimensions }, gauss))
      // At angles 0.05, 0.10, … rad from the query (cos θ·query + sin θ·a random direction orthogonal to it): the
      // float order is 0, 1, 2, … and the gaps (≥ 0.0037) are far wider than int8's error.
      const stored = Array.from({ length: 30 }, (_, i) => {
        const random = Float32Array.from({ length: dimensions }, gauss)
        const along = random.reduce((sum, x, d) => sum + x * query[d]!, 0)
        const across = normalized(Float32Array.from(random, (x, d) => x - along * query[d]!))
        const angle = 0.05 * (i + 1)
        return Float32Array.from(query, (x, d) => Math.cos(angle) * x + Math.sin(angle) * across[d]!)
      })
      const floatDistances: Array<number> = []
      for (const vector of stored) {
        const [row] = yield* sql<{ readonly d: number }>`SELECT vec_distance_cosine(${bytesOf(vector)}, ${bytesOf(query)}) AS d`
        floatDistances.push(row!.d)
      }
      const queryNorm = norm(query)
      const int8Distances = stored.map((vector) => cosineDistance(query, queryNorm, quantize(vector).values))
      for (let i = 0; i < stored.length; i++) expect(Math.abs(int8Distances[i]! - floatDistances[i]!)).toBeLessThan(0.002)
      const order = (distances: ReadonlyArray<number>) =>
        distances.map((d, i) => [d, i] as const).sort((a, b) => a[0] - b[0]).map(([, i]) => i)
      expect(order(floatDistances)).toEqual(stored.map((_, i) => i))
      expect(order(int8Distances)).toEqual(order(floatDistances))
    }).pipe(Effect.provide(Database.layerMemory)))
})
