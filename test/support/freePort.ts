import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodeNet from "node:net"
import { browserBlocked } from "../../src/channels/web/blockedPorts.js"

// A port for a server a test starts by number (a child `kern run`, a runner, PostgreSQL), which cannot listen on 0.
//
// Asking the OS for one (listen on 0, then let go) races: the port comes from the ephemeral range, which every
// outgoing connection and every other `listen(0)` of the parallel test workers draws from too, so by the time the
// server binds it, a client socket may hold it (CI saw "could not listen on 127.0.0.1:33239: the port is in use").
// Ports are taken instead from below the ephemeral range, where nothing is handed out by the OS, each worker in a
// slice of its own (VITEST_POOL_ID, else the pid), and checked free before they are returned. A port fetch refuses
// (10080 is in the first slice) is never returned: a test's fetch to it fails "bad port".

const lowest = 10_000
const slices = 16

/** The first port of the OS's ephemeral range (32768 on Linux's default), the top of the range used here. */
const ephemeralStart = (): number => {
  try {
    const first = Number(NodeFs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0])
    return Number.isInteger(first) && first > lowest + slices * 64 ? first : 32_768
  } catch {
    return 32_768
  }
}

const slice = (): { readonly from: number; readonly size: number } => {
  const size = Math.floor((ephemeralStart() - lowest) / slices)
  const pool = Number(process.env.VITEST_POOL_ID)
  const index = (Number.isInteger(pool) && pool > 0 ? pool : process.pid) % slices
  return { from: lowest + index * size, size }
}

const isFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = NodeNet.createServer()
    probe.once("error", () => resolve(false))
    probe.listen({ host: "127.0.0.1", port, exclusive: true }, () => probe.close(() => resolve(true)))
  })

/** A loopback port outside the ephemeral range, free now: for a server the caller is about to start on it. */
export const freePortAsync = async (): Promise<number> => {
  const { from, size } = slice()
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = from + Math.floor(Math.random() * size)
    if (!browserBlocked(port) && (await isFree(port))) return port
  }
  throw new Error(`no free loopback port in ${from}–${from + size - 1} after 200 tries`)
}

/** freePortAsync as an Effect. */
export const freePort: Effect.Effect<number> = Effect.promise(freePortAsync)
