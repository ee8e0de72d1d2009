-- no transaction: dropped CONCURRENTLY, so the table keeps being written meanwhile.
-- The index just built leads with the same columns and serves every read this one served.
DROP INDEX CONCURRENTLY IF EXISTS "campaigns_user_id_created_at_idx";
