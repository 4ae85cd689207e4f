import { Layer } from "effect"
import * as Cluster from "./Cluster.js"
import * as ConversationEntity from "./ConversationEntity.js"

/** The conversations as Entities of the cluster over kern.db: what `Conversations.layerDurable` loads. */
export const layer = ConversationEntity.layer.pipe(Layer.provide(Cluster.layer))
