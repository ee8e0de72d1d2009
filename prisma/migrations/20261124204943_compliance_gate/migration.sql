-- CreateEnum
CREATE TYPE "ConsentKind" AS ENUM ('calls', 'ai_calls', 'recording');

-- CreateEnum
CREATE TYPE "DialBlockReason" AS ENUM ('do_not_call', 'consent_missing', 'regional_hours', 'regional_day', 'holiday');

-- AlterTable
ALTER TABLE "campaigns" ADD COLUMN     "regional_rules" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "required_consent" "ConsentKind"[] DEFAULT ARRAY[]::"ConsentKind"[];

-- CreateTable
CREATE TABLE "contact_consents" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "contact_id" UUID NOT NULL,
    "kind" "ConsentKind" NOT NULL,
    "source" VARCHAR(200) NOT NULL,
    "obtained_at" TIMESTAMPTZ(3) NOT NULL,
    "proof" VARCHAR(2000),
    "revoked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "contact_consents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "dial_blocks" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "campaign_id" UUID NOT NULL,
    "contact_id" UUID NOT NULL,
    "reason" "DialBlockReason" NOT NULL,
    "detail" VARCHAR(200) NOT NULL DEFAULT '',
    "until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dial_blocks_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "contact_consents_contact_id_kind_idx" ON "contact_consents"("contact_id", "kind");

-- CreateIndex
CREATE INDEX "contact_consents_user_id_created_at_idx" ON "contact_consents"("user_id", "created_at");

-- CreateIndex
CREATE INDEX "dial_blocks_campaign_id_reason_idx" ON "dial_blocks"("campaign_id", "reason");

-- CreateIndex
CREATE INDEX "dial_blocks_contact_id_created_at_idx" ON "dial_blocks"("contact_id", "created_at");

-- AddForeignKey
ALTER TABLE "contact_consents" ADD CONSTRAINT "contact_consents_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "contact_consents" ADD CONSTRAINT "contact_consents_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "dial_blocks" ADD CONSTRAINT "dial_blocks_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "dial_blocks" ADD CONSTRAINT "dial_blocks_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "dial_blocks" ADD CONSTRAINT "dial_blocks_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE NO ACTION ON UPDATE CASCADE;
