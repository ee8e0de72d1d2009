-- AlterTable
ALTER TABLE "campaign_contacts" ADD COLUMN     "variant_id" UUID;

-- CreateTable
CREATE TABLE "campaign_variants" (
    "id" UUID NOT NULL,
    "campaign_id" UUID NOT NULL,
    "agent_id" UUID NOT NULL,
    "name" VARCHAR(64) NOT NULL,
    "weight" INTEGER NOT NULL,
    "position" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "campaign_variants_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "campaign_variants_agent_id_idx" ON "campaign_variants"("agent_id");

-- CreateIndex
CREATE UNIQUE INDEX "campaign_variants_campaign_id_position_key" ON "campaign_variants"("campaign_id", "position");

-- AddForeignKey
ALTER TABLE "campaign_variants" ADD CONSTRAINT "campaign_variants_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "campaign_variants" ADD CONSTRAINT "campaign_variants_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE NO ACTION ON UPDATE CASCADE;
