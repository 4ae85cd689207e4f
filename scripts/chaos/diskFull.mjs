// The disk-full run of issue 24 (not part of CI; mounts a tmpfs, so it runs as root):
// `npm run chaos:diskfull [-- --on sessions|kern] [-- --phase SECONDS]`. See test/chaos/diskFull.ts.
import { main } from "../../test/chaos/diskFull.ts"

process.exitCode = await main(process.argv.slice(2))
