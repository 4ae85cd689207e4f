import { Console, Layer } from "effect"
import * as Layers from "../runtime/layers.js"
import * as RetentionJob from "../runtime/RetentionJob.js"

// The agent's layers as the CLI uses them: notices (config warnings, the lock's waiting line) go to stderr.

const stderr: Layers.Report = (line) => Console.error(`kern: ${line}`)

export type HoldFolder = Omit<Layers.HoldFolder, "report">

export const kernelAgentLayer = (dir: string) => Layers.kernelAgentLayer(dir, stderr)

/** A single turn's agent, over its folder or a configuration already loaded from it. */
export const agentRuntimeLayer = (source: Layers.ConfigSource, hold: HoldFolder) => Layers.agentRuntimeLayer(source, { ...hold, report: stderr })

// The running agent (`kern run`, `start`, `tui`) applies retention once a day (RetentionJob). It is wired here, at the
// edge, not in Layers.servingLayer: the runtime's tests wait for the Scheduler's first sleep under TestClock, and a
// second Clock-driven fiber would answer that wait in its place.
export const runningAgentLayer = (dir: string, hold: HoldFolder) =>
  RetentionJob.layer.pipe(Layer.provideMerge(Layers.runningAgentLayer(dir, { ...hold, report: stderr })))

/** The running agent with `channels` built over it before it serves a turn (Layers.runningAgentLayerWith). */
export const runningAgentLayerWith = <A, E, R>(dir: string, hold: HoldFolder, channels: Layer.Layer<A, E, R>) =>
  RetentionJob.layer.pipe(Layer.provideMerge(Layers.runningAgentLayerWith(dir, { ...hold, report: stderr }, channels)))
