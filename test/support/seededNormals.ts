/** A deterministic generator (mulberry32) and standard normals from it (Box–Muller): the same vectors every run. */
export const seededNormals = (seed: number): () => number => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return () => Math.sqrt(-2 * Math.log(next() || 1e-12)) * Math.cos(2 * Math.PI * next())
}

/** The vector scaled to unit length, in place. */
export const normalized = (v: Float32Array): Float32Array => {
  let norm = 0
  for (const x of v) norm += x * x
  norm = Math.sqrt(norm)
  for (let i = 0; i < v.length; i++) v[i]! /= norm
  return v
}

/**
 * Vectors shaped like embeddings of real text: `topics` random directions, and each vector drawn near one of them
 * (its topic plus noise of comparable size: cosine ~0.8 within a topic, ~0 across). Uniform random vectors would be
 * unlike any embedding model's output: every point equally far from every other.
 */
export const topicVectors = (seed: number, dimensions: number, topics: number): (topic: number) => Float32Array => {
  const gauss = seededNormals(seed)
  const centers = Array.from({ length: topics }, () => Float32Array.from({ length: dimensions }, gauss))
  return (topic) => normalized(Float32Array.from(centers[topic % topics]!, (x) => x + 0.5 * gauss()))
}
