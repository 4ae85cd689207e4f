/**
 * Recall's tables on PostgreSQL, run in order as kern's PostgreSQL migration `0002_recall`
 * (src/runtime/agentDatabase.ts). The pgrecall branch fills this in (tsvector keywords, pgvector vectors); until it
 * lands, recall has no tables on PostgreSQL.
 */
export const statements: ReadonlyArray<string> = []
