import type { SqlClient } from "@effect/sql"
import type { Effect } from "effect"
import meta from "./migrations/0001_meta.js"
import kernel from "./migrations/0002_kernel.js"
import artifacts from "./migrations/0003_artifacts.js"
import pairing from "./migrations/0004_pairing.js"
import toolReads from "./migrations/0100_tool_reads.js"
import sessions from "./migrations/0101_sessions.js"
import users from "./migrations/0200_users.js"
import heartbeat from "./migrations/0201_heartbeat.js"
import notesSummary from "./migrations/0202_notes_summary.js"
import inbox from "./migrations/0300_inbox.js"
import recall from "./migrations/0400_recall.js"
import channelCursors from "./migrations/0500_channel_cursors.js"
import dropSessionCounts from "./migrations/0600_drop_session_counts.js"
import context from "./migrations/0700_context.js"
import replyPlaceholders from "./migrations/0830_reply_placeholders.js"
import browserSessions from "./migrations/0840_browser_sessions.js"
import summarizerHealth from "./migrations/0850_summarizer_health.js"
import recallInt8Vectors from "./migrations/0860_recall_int8_vectors.js"
import heartbeatDue from "./migrations/0870_heartbeat_due.js"
import notices from "./migrations/0875_notices.js"
import userMemory from "./migrations/0881_user_memory.js"
import baselineContracts from "./migrations/0960_baseline_contracts.js"
import mcpToolCache from "./migrations/0961_mcp_tool_cache.js"
import contextStats from "./migrations/0970_context_stats.js"
import backgroundJobs from "./migrations/1010_background_jobs.js"
import subagents from "./migrations/1020_subagents.js"
import schedules from "./migrations/1030_schedules.js"
import spendLedger from "./migrations/1040_spend_ledger.js"
import media from "./migrations/1050_media.js"
import mediaLinks from "./migrations/1057_media_links.js"
import mediaRetention from "./migrations/1155_media_retention.js"
import heartbeatActivity from "./migrations/1170_heartbeat_activity.js"
import retention from "./migrations/1065_retention.js"
import auditJournals from "./migrations/1070_audit_journals.js"

/**
 * Every migration of kern.db, keyed `<id>_<name>`; ids only ever grow. A subsystem that needs tables adds a file
 * under migrations/ and a line here, then runs `npx tsx scripts/freshSchema.ts`: a new kern.db is created from that
 * snapshot of the migrated schema (Database.ts), and test/storage/freshSchema.test.ts fails while it is stale.
 */
export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_meta": meta,
  "0002_kernel": kernel,
  "0003_artifacts": artifacts,
  "0004_pairing": pairing,
  // Numbered apart from the others so that branches adding migrations at the same time do not collide.
  "0100_tool_reads": toolReads,
  "0101_sessions": sessions,
  "0200_users": users,
  "0201_heartbeat": heartbeat,
  "0202_notes_summary": notesSummary,
  "0300_inbox": inbox,
  "0400_recall": recall,
  "0500_channel_cursors": channelCursors,
  "0600_drop_session_counts": dropSessionCounts,
  "0700_context": context,
  "0830_reply_placeholders": replyPlaceholders,
  "0840_browser_sessions": browserSessions,
  "0850_summarizer_health": summarizerHealth,
  "0860_recall_int8_vectors": recallInt8Vectors,
  "0870_heartbeat_due": heartbeatDue,
  "0875_notices": notices,
  "0881_user_memory": userMemory,
  "0960_baseline_contracts": baselineContracts,
  "0961_mcp_tool_cache": mcpToolCache,
  "0970_context_stats": contextStats,
  "1010_background_jobs": backgroundJobs,
  "1020_subagents": subagents,
  "1030_schedules": schedules,
  "1040_spend_ledger": spendLedger,
  "1050_media": media,
  "1057_media_links": mediaLinks,
  "1065_retention": retention,
  "1070_audit_journals": auditJournals,
  "1155_media_retention": mediaRetention,
  "1170_heartbeat_activity": heartbeatActivity
}
