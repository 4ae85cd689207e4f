// The kill-9 run of issue 24 (not part of CI): `npm run chaos:kill9 [-- --kills N]`. The harness is TypeScript beside
// the tests (test/chaos/), run through tsx as the benchmarks are; see test/chaos/killNine.ts.
import { main } from "../../test/chaos/killNine.ts"

process.exitCode = await main(process.argv.slice(2))
