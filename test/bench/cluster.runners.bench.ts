// What the multi-runner cluster on PostgreSQL costs (MultiRunner.ts, AgentEntity.ts), with real runner processes
// (test/support/clusterRunner.ts bundled as it would ship, run with plain node) on a throwaway PostgreSQL server:
//
// - cluster.failover: kill -9 of a runner to the first message of one of its agents handled on the survivor. The
//   floor, in the same rounds: a message to an agent on a live runner, sent to handled. The lock expiration (the
//   time the survivors must wait by design) is set short (4 s, polls every 1 s) through the runners' config and
//   reported beside: the failover is about that expiration, less up to one renewal interval (the dead runner's last
//   heartbeat was that old), plus up to one read of the runners' list.
// - cluster.handover: the same for a clean stop (SIGTERM, a runner's restart): the runner gives its shards up and
//   leaves the registry, and the survivor takes them at its next read of the runners' list, whatever the expiration.
// - cluster.idle.cpu: CPU time per minute of a runner with no messages (two runners up, shards split, MultiRunner's
//   default settings: locks expiring after 30 s, renewed every 10 s, the journal polled every 5 s), from
//   /proc/<pid>/stat. The floor: a bare node process idling on a timer, sampled the same way. The PostgreSQL
//   server's CPU over the same windows (both runners' polling and heartbeats) is reported beside.
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, ManagedRuntime, Redacted, Scope } from "effect"
import { spawn, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { pathToFileURL } from "node:url"
import { createRunnerTables, type RunnerProcess, startRunner } from "../support/clusterRunners.js"
import { freePortAsync } from "../support/freePort.js"
import { type Postgres, startPostgres } from "../support/postgres.js"
import type { Bench } from "./bench.js"
import { sleep, waitFor } from "./waitFor.js"
import { benchCacheFolder } from "./kernBuild.js"

const root = NodePath.resolve(import.meta.dirname, "../..")

/**
 * The runner script bundled with the shipped build's options, into the bench cache: by esbuild in a node process of
 * its own (esbuild's API finds its binary from its own place, which a bundle of this file does not share).
 */
const bundleRunner = async () => {
  const outfile = NodePath.join(benchCacheFolder(root), "clusterRunner.mjs")
  const options = pathToFileURL(NodePath.join(root, "scripts/esbuild-options.mjs")).href
  const script = [
    `import { build } from "esbuild"; import { shipped } from ${JSON.stringify(options)};`,
    `await build({ ...shipped, entryPoints: [${JSON.stringify(NodePath.join(root, "test/support/clusterRunner.ts"))}],`,
    `outfile: ${JSON.stringify(outfile)}, define: { "import.meta.dirname": ${JSON.stringify(JSON.stringify(NodePath.join(root, "test/support")))} } })`
  ].join(" ")
  const built = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: root, encoding: "utf8" })
  if (built.status !== 0) throw new Error(`could not bundle the runner: ${built.stderr}`)
  return outfile
}

const makeClient = (pg: Postgres) => ManagedRuntime.make(PgClient.layer({ url: pg.url, maxConnections: 2 }))
type Client = ReturnType<typeof makeClient>

/** A PostgreSQL server for the bench, the tables the runners write, and a client on it. */
const withPostgres = async <A>(use: (pg: Postgres, client: Client) => Promise<A>) => {
  const scope = Effect.runSync(Scope.make())
  try {
    const pg = await Effect.runPromise(Scope.extend(startPostgres, scope))
    const client = makeClient(pg)
    try {
      await client.runPromise(Effect.flatMap(SqlClient.SqlClient, createRunnerTables))
      return await use(pg, client)
    } finally {
      await client.dispose()
    }
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

interface Row {
  readonly agent: string
  readonly inbox_id: number
  readonly runner: string
  readonly at: Date
}

const query = <A extends object>(client: Client, text: string) =>
  client.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text)))

/** Two runners up, each holding some of the 16 shard locks (advisory locks). */
const startPair = async (pg: Postgres, client: Client, bundle: string, round: number, settings: { lockExpirationMs?: number; pollMs?: number }) => {
  const url = Redacted.value(pg.url)
  const a = startRunner({ url, name: `a${round}`, port: await freePortAsync(), ...settings }, bundle)
  const b = startRunner({ url, name: `b${round}`, port: await freePortAsync(), ...settings }, bundle)
  await Promise.all([a.ready, b.ready])
  await waitFor("the shards split between both runners", 120, async () => {
    const rows = await query<{ holders: string; locks: string }>(
      client,
      "SELECT count(DISTINCT pid) AS holders, count(*) AS locks FROM pg_locks WHERE locktype = 'advisory' AND granted"
    )
    return Number(rows[0]?.holders) === 2 && Number(rows[0]?.locks) === 16 ? true : undefined
  })
  return [a, b] as const
}

/** The messages handled, each once (a message run again after a rebalance is counted at its first run). */
const handledRows = (client: Client, ids: ReadonlyArray<number>) =>
  query<Row>(client, `SELECT agent, inbox_id, runner, at FROM runner_handled WHERE inbox_id IN (${ids.join(",")})`)

/** `end` ends runner a: kill -9 (a crash), or SIGTERM (a clean stop: a runner's restart). */
const failover = (rounds: number, end: "kill -9" | "SIGTERM", settings: { lockExpirationMs: number; pollMs: number }) => async () => {
  const bundle = await bundleRunner()
  return withPostgres(async (pg, client) => {
    const samples: Array<number> = []
    const baseline: Array<number> = []
    let id = 0
    for (let round = 0; round < rounds; round++) {
      const [a, b] = await startPair(pg, client, bundle, round, settings)
      try {
        const agents = Array.from({ length: 16 }, (_, i) => `r${round}-agent-${i}`)
        const first = agents.map((agent) => {
          b.send(agent, "main", ++id, "hello")
          return id
        })
        const rows = await waitFor("the first messages handled", 120, async () => {
          const found = await handledRows(client, first)
          return found.length === first.length ? found : undefined
        }).catch((error: Error) => {
          throw new Error(`${error.message}\nrunner a:\n${a.output().slice(-4000)}\nrunner b:\n${b.output().slice(-4000)}`)
        })
        const onA = rows.filter((row) => row.runner === a.name).map((row) => row.agent)
        const onB = rows.filter((row) => row.runner === b.name).map((row) => row.agent)
        if (onA.length === 0 || onB.length === 0) throw new Error(`agents did not split: ${rows.length} handled`)
        // The floor: a message to an agent on the live runner, sent to handled.
        const probe = ++id
        const sentAt = Date.now()
        b.send(onB[0]!, "main", probe, "probe")
        const [handled] = await waitFor("the probe handled", 60, async () => {
          const found = await handledRows(client, [probe])
          return found.length === 1 ? found : undefined
        })
        baseline.push(handled!.at.getTime() - sentAt)

        const killedAt = Date.now()
        await (end === "kill -9" ? a.kill9() : a.stop())
        const moved = onA.map((agent) => {
          b.send(agent, "main", ++id, "after")
          return id
        })
        const after = await waitFor("a's agents handled on b", 120, async () => {
          const found = await handledRows(client, moved)
          return found.length === moved.length ? found : undefined
        })
        samples.push(Math.min(...after.map((row) => row.at.getTime())) - killedAt)
      } finally {
        await a.kill9()
        await b.kill9()
      }
    }
    return { samples, baseline, extra: { lockExpirationMs: settings.lockExpirationMs } }
  })
}

/** utime + stime of a process, in ms (clock ticks of 10 ms). */
const cpuMs = (pid: number) => {
  const stat = NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** The PostgreSQL server's processes: the postmaster (first line of postmaster.pid) and its children. */
const postgresPids = (pg: Postgres) => {
  const postmaster = Number(NodeFs.readFileSync(NodePath.join(pg.dir, "data", "postmaster.pid"), "utf8").split("\n")[0])
  const children = NodeFs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => {
    try {
      const stat = NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8")
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === postmaster
    } catch {
      return false
    }
  })
  return [postmaster, ...children]
}
const totalCpuMs = (pids: ReadonlyArray<number>) =>
  pids.reduce((sum, pid) => {
    try {
      return sum + cpuMs(pid)
    } catch {
      return sum
    }
  }, 0)

/** CPU ms per minute of `pid`, over `count` windows of `windowMs`. */
const cpuPerMinute = async (pids: () => ReadonlyArray<number>, count: number, windowMs: number) => {
  const samples: Array<number> = []
  for (let i = 0; i < count; i++) {
    const start = totalCpuMs(pids())
    const startedAt = Date.now()
    await sleep(windowMs)
    samples.push(((totalCpuMs(pids()) - start) * 60_000) / (Date.now() - startedAt))
  }
  return samples
}

const idleCpu = (count: number, windowMs: number) => async () => {
  const bundle = await bundleRunner()
  return withPostgres(async (pg, client) => {
    let runners: ReadonlyArray<RunnerProcess> = []
    const bare = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000); process.stdout.write('idle\\n')"], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    try {
      runners = await startPair(pg, client, bundle, 0, {})
      // Past start-up: the shards taken, the first polls done.
      await sleep(5000)
      const runner = runners[0]!.child.pid!
      const samples: Array<number> = []
      const baseline: Array<number> = []
      const server: Array<number> = []
      for (let i = 0; i < count; i++) {
        const pgStart = totalCpuMs(postgresPids(pg))
        const pgAt = Date.now()
        samples.push(...(await cpuPerMinute(() => [runner], 1, windowMs)))
        server.push(((totalCpuMs(postgresPids(pg)) - pgStart) * 60_000) / (Date.now() - pgAt))
        baseline.push(...(await cpuPerMinute(() => [bare.pid!], 1, windowMs)))
      }
      server.sort((x, y) => x - y)
      return { samples, baseline, extra: { postgresServerCpuMsPerMinute: server[Math.floor(server.length / 2)]! } }
    } finally {
      bare.kill()
      for (const runner of runners) await runner.kill9()
    }
  })
}

export const benches: ReadonlyArray<Bench> = [
  { name: "cluster.failover", unit: "ms (kill -9 to handled on the survivor)", run: failover(3, "kill -9", { lockExpirationMs: 4000, pollMs: 1000 }) },
  // A clean stop does not wait for the locks: they expire after 2 minutes here.
  { name: "cluster.handover", unit: "ms (SIGTERM to handled on the survivor)", run: failover(3, "SIGTERM", { lockExpirationMs: 120_000, pollMs: 1000 }) },
  { name: "cluster.idle.cpu", unit: "CPU ms per minute (one idle runner)", run: idleCpu(4, 10_000) }
]
