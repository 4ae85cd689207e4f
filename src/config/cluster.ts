import { Schema } from "effect"

const Host = Schema.NonEmptyTrimmedString.pipe(
  Schema.pattern(/^[A-Za-z0-9.:[\]-]+$/)
).annotations({ identifier: "a host name or IP address" })
const Port = Schema.Int.pipe(Schema.between(1, 65535)).annotations({ identifier: "a port number 1–65535" })

/** Addresses that name no machine the other runners could reach. */
const unreachable = new Set(["0.0.0.0", "::", "[::]"])

/**
 * `cluster`, a runner's own place among the runners that share agents on PostgreSQL (with `database.url`): `host`
 * and `port` are where the other runners reach this one (its identity in the cluster: distinct per runner), `listen`
 * the host its socket binds when not `host` (0.0.0.0 behind NAT or in a container). `lockExpirationSeconds`: how long
 * a dead runner's agents wait before a survivor takes them (default 30). `shards`: the same on every runner of one
 * database, never changed once it holds messages (default 64).
 */
export const ClusterConfig = Schema.Struct({
  host: Host.pipe(Schema.filter((host) =>
    !unreachable.has(host) || `"${host}" is no address another runner can reach: give this machine's address, and "listen": "${host}" to bind every interface`
  )),
  port: Port,
  listen: Schema.optional(Host),
  lockExpirationSeconds: Schema.optional(Schema.Int.pipe(Schema.between(3, 600)).annotations({ identifier: "an integer from 3 to 600" })),
  shards: Schema.optional(Schema.Int.pipe(Schema.between(1, 1000)).annotations({ identifier: "an integer from 1 to 1000" }))
})
export type ClusterConfig = typeof ClusterConfig.Type

export const clusterExpectation =
  "an object { host, port, listen?, lockExpirationSeconds?, shards? }: host and port where the other runners reach this one (distinct per runner)"
