-- CreateEnum
CREATE TYPE "ProvisioningState" AS ENUM ('pending', 'ready', 'failed');

-- AlterTable
ALTER TABLE "agents" ADD COLUMN     "provider_llm_id" VARCHAR(128),
ADD COLUMN     "provider_drift" TEXT,
ADD COLUMN     "provider_drift_at" TIMESTAMPTZ(3),
ADD COLUMN     "provider_modified_at" BIGINT,
ADD COLUMN     "provider_version" INTEGER,
ADD COLUMN     "provisioned_version" INTEGER,
ADD COLUMN     "provisioning_error" TEXT,
ADD COLUMN     "provisioning_queued_version" INTEGER,
ADD COLUMN     "provisioning_state" "ProvisioningState" NOT NULL DEFAULT 'pending',
ADD COLUMN     "provisioning_updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "call_attempts" ADD COLUMN     "agent_id" UUID,
ADD COLUMN     "agent_version" INTEGER;
