import { assert, describe, it } from "@effect/vitest"
import { credentialMarker, redactCredentialShapes, redactCredentialShapesIn } from "../../src/kernel/credentialShapes.js"

// Each: a credential as it turns up in files and command output; the secret part must not survive.
const corpus: ReadonlyArray<readonly [string, string, string]> = [
  ["OpenAI key", "OPENAI=sk-proj-abcdefghijklmnopqrstuvwxyz012345", "abcdefghijklmnopqrstuvwxyz012345"],
  ["Anthropic key", "key: sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx", "AbCdEfGhIjKlMnOpQrStUvWx"],
  ["OpenRouter key", "sk-or-v1-0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"],
  ["AWS access key id", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"],
  ["AWS secret", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
  ["GitHub token", "git clone https://ghp_0123456789abcdefghijABCDEFGHIJ012345@github.com/x/y", "ghp_0123456789abcdefghijABCDEFGHIJ012345"],
  ["GitHub fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_11ABCDEFG0123456789_abcdefghij"],
  ["GitLab token", "glpat-abcdefghij0123456789", "glpat-abcdefghij0123456789"],
  ["Slack bot token", "SLACK=xoxb-1234567890-0987654321-AbCdEfGhIjKl", "xoxb-1234567890-0987654321-AbCdEfGhIjKl"],
  ["Stripe key", "stripe: sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"],
  ["Google API key", "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234"],
  ["JWT", "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "dozjgNryP4J3jVmNHl0w5N"],
  ["Bearer header", "Authorization: Bearer abcdef0123456789ABCDEF.ghij", "abcdef0123456789ABCDEF"],
  ["password assignment", "DB_PASSWORD=hunter2hunter2", "hunter2hunter2"],
  ["quoted JSON secret", "{\"client_secret\": \"s3cr3t-v4lu3-xyz\"}", "s3cr3t-v4lu3-xyz"],
  ["YAML api key", "api_key: 9f8e7d6c5b4a39281706", "9f8e7d6c5b4a39281706"],
  ["URL credentials", "postgres://admin:Sup3rS3cret@db.internal:5432/app", "Sup3rS3cret"],
  ["PEM private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx\nabc\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAx"],
  ["OpenSSH key, cut off", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", "b3BlbnNzaC1rZXktdjEAAAAA"]
]

describe("STRICT's redaction of credential shapes", () => {
  for (const [name, text, secret] of corpus) {
    it(`redacts a ${name}`, () => {
      const out = redactCredentialShapes(text)
      assert.notInclude(out, secret)
      assert.include(out, credentialMarker)
    })
  }

  it("leaves ordinary text alone", () => {
    const plain = [
      "function add(a, b) { return a + b }",
      "The token bucket refills every second.",
      "password reset emails go out at 09:00",
      "git commit -m 'fix: skip tokens'",
      "see https://github.com/Effect-TS/effect/blob/main/README.md",
      "const apiKey = config.apiKeyEnv"
    ].join("\n")
    assert.strictEqual(redactCredentialShapes(plain), plain)
  })

  it("reaches every string of a structured result, keeping its shape", () => {
    const data = { text: "ok", lines: ["x", "TOKEN=abcdefgh12345678"], nested: { n: 3 } }
    const out = redactCredentialShapesIn(data)
    assert.deepStrictEqual(out, { text: "ok", lines: ["x", `TOKEN=${credentialMarker}`], nested: { n: 3 } })
    const clean = { a: "b" }
    assert.strictEqual(redactCredentialShapesIn(clean), clean)
  })
})
