/**
 * A deterministic embedding for tests and benchmarks: the text's words, each mapped through a synonym table and
 * hashed to a dimension with a sign (feature hashing), normalized to unit length. Texts sharing words (or words a
 * test declares synonyms) point the same way, so a paraphrase is near and an unrelated text far, without a model.
 */
export const bagOfWordsEmbedding = (
  text: string,
  dimensions: number,
  synonyms: Readonly<Record<string, string>> = {}
): Array<number> => {
  const vector = new Array<number>(dimensions).fill(0)
  for (const raw of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const word = synonyms[raw] ?? raw
    let hash = 2166136261
    for (let i = 0; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), 16777619) >>> 0
    vector[hash % dimensions]! += (hash >>> 31) === 1 ? -1 : 1
  }
  const norm = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0))
  // An empty text still gets a unit vector, so cosine distance stays defined.
  if (norm === 0) vector[0] = 1
  return norm === 0 ? vector : vector.map((x) => x / norm)
}
