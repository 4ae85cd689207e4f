import type { Statement } from "@effect/sql"

/** pgvector's HNSW index takes `vector` up to 2,000 dimensions and `halfvec` up to 4,000. */
export const hnswVectorMax = 2_000
export const hnswHalfvecMax = 4_000

/**
 * How vectors of one dimension are stored, compared and indexed. Stored as `vector(n)` (float4, exact); compared by
 * cosine distance (`<=>`, 1 − cosine, as sqlite-vec's), the measure kern's embeddings are searched by. Indexed by
 * HNSW (no training step, unlike IVFFlat, so an index made on the empty table is good as it fills): on the column
 * up to 2,000 dimensions (OpenAI's 1,536 and every local model kern's docs name), on its `halfvec` cast up to 4,000
 * (3,072-dimension models), and beyond that not at all: every vector is scored (exact, slower).
 */
export interface VectorPlan {
  readonly dimension: number
  /** The type the column is compared as, and the query vector is cast to. */
  readonly compareAs: string
  /** `CREATE INDEX …` for the vectors' table, or undefined: no index at this dimension. */
  readonly index: string | undefined
}

export const hnswPlan = (dimension: number): VectorPlan => {
  const n = Math.trunc(dimension)
  if (n <= hnswVectorMax) {
    return {
      dimension: n,
      compareAs: `vector(${n})`,
      index: "CREATE INDEX recall_vectors_hnsw ON recall_vectors USING hnsw (embedding vector_cosine_ops)"
    }
  }
  if (n <= hnswHalfvecMax) {
    return {
      dimension: n,
      compareAs: `halfvec(${n})`,
      index: `CREATE INDEX recall_vectors_hnsw ON recall_vectors USING hnsw ((embedding::halfvec(${n})) halfvec_cosine_ops)`
    }
  }
  return { dimension: n, compareAs: `vector(${n})`, index: undefined }
}

/**
 * The cosine distance of the column to the query vector, as the index's expression has it (so the planner can use
 * the index for an ORDER BY on it). The query vector is a bound parameter (pgvector's text form); only the plan's
 * type names, made from an integer, are SQL text.
 */
export const cosineDistanceTo = (
  sql: Statement.Constructor,
  plan: VectorPlan,
  column: string,
  query: Float32Array
): Statement.Fragment => {
  const cast = sql.literal(`::${plan.compareAs}`)
  const left = plan.compareAs.startsWith("halfvec") ? sql`(${sql.literal(column)}${cast})` : sql.literal(column)
  return sql`${left} <=> ${vectorLiteral(query, plan.dimension)}${cast}`
}

/**
 * pgvector's text form of a vector (`[1,0.5,…]`), `dimension` values long (a shorter one padded with zeros, a longer
 * one cut, as the stored dimension decides). A value that is not finite is 0: pgvector refuses NaN and infinities.
 */
export const vectorLiteral = (vector: Float32Array, dimension: number): string => {
  const parts = new Array<string>(dimension)
  for (let i = 0; i < dimension; i++) {
    const x = vector[i] ?? 0
    parts[i] = Number.isFinite(x) ? String(x) : "0"
  }
  return `[${parts.join(",")}]`
}
