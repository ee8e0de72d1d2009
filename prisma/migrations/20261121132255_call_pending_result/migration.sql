-- AlterTable
ALTER TABLE "call_attempts" ADD COLUMN     "pending_result" JSONB;
