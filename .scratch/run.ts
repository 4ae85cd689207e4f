import { runKernIn } from "../test/support/inProcessCli.js"
const r = await runKernIn(process.argv.slice(2), { env: { OPENROUTER_API_KEY: "sk-test-123456789" } })
console.log(r.status); console.log(r.stdout); console.log(r.stderr)
