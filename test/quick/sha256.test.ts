import { describe, expect, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import * as NodeFs from "node:fs"
import { sha256Hex } from "../../src/quick/sha256.js"

// The kept `kern status` report's key is SHA-256 in plain code (src/quick/sha256.ts): it must be node:crypto's digest
// of the same text, byte for byte, whatever the text.

const reference = (text: string) => createHash("sha256").update(text).digest("hex")

/** A small deterministic generator, so a failure names a text that can be made again. */
const texts = (seed: number, count: number): Array<string> => {
  let state = seed
  const next = () => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0
    return state
  }
  const alphabet = ["a", "Z", "0", " ", "\n", "\u0000", "é", "€", "\u202e", "😀", "\ud800", "\udfff", "\u001b[31m", "\"", "\\"]
  return Array.from({ length: count }, () => {
    const length = next() % 400
    let text = ""
    for (let i = 0; i < length; i++) text += alphabet[next() % alphabet.length]
    return text
  })
}

describe("sha256Hex", () => {
  it("is FIPS 180-4's SHA-256: the standard's own examples", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    expect(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe(
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    )
    expect(sha256Hex("a".repeat(1_000_000))).toBe("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  })

  it("equals node:crypto's digest at every length around the block's edges, and over text of every kind", () => {
    for (let length = 0; length <= 300; length++) {
      expect(sha256Hex("x".repeat(length)), `${length} bytes`).toBe(reference("x".repeat(length)))
      // Multi-byte characters: the length that counts is the UTF-8 bytes'.
      expect(sha256Hex("é".repeat(length)), `${length} é`).toBe(reference("é".repeat(length)))
    }
    for (const text of texts(28, 2_000)) expect(sha256Hex(text), JSON.stringify(text)).toBe(reference(text))
    // Lone surrogates are encoded as node:crypto encodes a string: U+FFFD.
    for (const text of ["\ud800", "a\udc00b", "😀".slice(0, 1), "😀".slice(1)]) expect(sha256Hex(text)).toBe(reference(text))
    // The repository's own files: long, real text.
    for (const file of ["README.md", "src/quick/statusCache.ts", "package.json"]) {
      const text = NodeFs.readFileSync(file, "utf8")
      expect(sha256Hex(text), file).toBe(reference(text))
    }
  })
})
