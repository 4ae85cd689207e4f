/**
 * Stored embeddings are int8 with one scale per vector (`value ≈ int8 × scale`, scale = max |value| / 127): a
 * 1,536-dimension vector takes 1,536 bytes instead of 6,144, and two fit in a 4 KiB page where a float32 one
 * needed a page and an overflow page. Cosine distance ignores the scale, so the search scores the int8 values
 * against the float query directly; the scale keeps the stored form a whole approximation of the vector.
 */
export interface QuantizedVector {
  readonly values: Int8Array
  readonly scale: number
}

/** Symmetric int8 quantization: each value to the nearest of 255 steps of `max |value| / 127`. */
export const quantize = (vector: Float32Array): QuantizedVector => {
  let max = 0
  for (const x of vector) if (Math.abs(x) > max) max = Math.abs(x)
  const values = new Int8Array(vector.length)
  if (max === 0 || !Number.isFinite(max)) return { values, scale: 0 }
  const scale = max / 127
  for (let i = 0; i < vector.length; i++) values[i] = Math.round(vector[i]! / scale)
  return { values, scale }
}

export const dequantize = (quantized: QuantizedVector): Float32Array =>
  Float32Array.from(quantized.values, (value) => value * quantized.scale)

/** The Euclidean norm of a float query, computed once per search. */
export const norm = (vector: Float32Array): number => {
  let sum = 0
  for (const x of vector) sum += x * x
  return Math.sqrt(sum)
}

/**
 * Cosine distance (1 − cosine, as sqlite-vec's vec_distance_cosine) between a float query of norm `queryNorm`
 * and stored int8 values; 1 when either is all zeros.
 */
export const cosineDistance = (query: Float32Array, queryNorm: number, values: Int8Array): number => {
  let dot = 0
  let sum = 0
  const n = Math.min(query.length, values.length)
  for (let i = 0; i < n; i++) {
    const v = values[i]!
    dot += query[i]! * v
    sum += v * v
  }
  return sum === 0 || queryNorm === 0 ? 1 : 1 - dot / (queryNorm * Math.sqrt(sum))
}

/** The bytes a float32 vector was stored as, read back (a copy: a blob's offset need not be 4-aligned). */
export const float32FromBytes = (bytes: Uint8Array): Float32Array => {
  const copy = new Uint8Array(bytes.byteLength)
  copy.set(bytes)
  return new Float32Array(copy.buffer, 0, Math.floor(bytes.byteLength / 4))
}

/** The bytes of a typed array, as the SQL layer binds a blob. */
export const bytesOf = (array: Float32Array | Int8Array): Uint8Array =>
  new Uint8Array(array.buffer, array.byteOffset, array.byteLength)

/** A stored int8 blob viewed as values (no copy). */
export const int8FromBytes = (bytes: Uint8Array): Int8Array => new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
