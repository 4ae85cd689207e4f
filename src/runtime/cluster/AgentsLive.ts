import { Layer } from "effect"
import { entityLayer } from "./AgentEntity.js"
import { multiRunner, type MultiRunnerOptions } from "./MultiRunner.js"

/**
 * What a runner among several loads (`kern serve` with `database.url` and `cluster`): the multi-runner cluster on the
 * SqlClient given (the cluster's shared schema) with the Agent entity registered. It needs the host's AgentPlacement
 * (waking an agent while the cluster holds it here) and the process's AgentReceivers (AgentReceivers.Default), which
 * the host shares with its agents: each hosted agent's runtime gets `conversationsOf(name)` as its Conversations,
 * built with this layer's services, and registers its `receive` there when it opens.
 */
export const layer = (options: MultiRunnerOptions) => entityLayer.pipe(Layer.provideMerge(multiRunner(options)))
