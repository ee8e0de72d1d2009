-- CreateEnum
CREATE TYPE "CampaignPurpose" AS ENUM ('solicitation', 'informational');

-- CreateEnum
CREATE TYPE "DoNotCallRegistry" AS ENUM ('us_dnc', 'ca_dncl', 'uk_tps', 'uk_ctps');

-- AlterEnum
ALTER TYPE "ConsentKind" ADD VALUE 'business_relationship';

-- AlterEnum
ALTER TYPE "DialBlockReason" ADD VALUE 'registry';

-- AlterTable
ALTER TABLE "campaigns" ADD COLUMN     "purpose" "CampaignPurpose" NOT NULL DEFAULT 'solicitation';

-- CreateTable
CREATE TABLE "registry_imports" (
    "id" UUID NOT NULL,
    "registry" "DoNotCallRegistry" NOT NULL,
    "downloaded_on" DATE NOT NULL,
    "numbers" BIGINT NOT NULL,
    "area_codes" TEXT[],
    "imported_by" VARCHAR(200) NOT NULL,
    "imported_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "registry_imports_pkey" PRIMARY KEY ("id")
);

-- CreateTable: one partition per registry, so that an import replaces a registry's partition whole
-- (a fresh table loaded with COPY, then swapped in: services/registries/store.ts).
CREATE TABLE "registry_numbers" (
    "registry" "DoNotCallRegistry" NOT NULL,
    "number" BIGINT NOT NULL,

    CONSTRAINT "registry_numbers_pkey" PRIMARY KEY ("number","registry")
) PARTITION BY LIST ("registry");

CREATE TABLE "registry_numbers_us_dnc" PARTITION OF "registry_numbers" FOR VALUES IN ('us_dnc');
CREATE TABLE "registry_numbers_ca_dncl" PARTITION OF "registry_numbers" FOR VALUES IN ('ca_dncl');
CREATE TABLE "registry_numbers_uk_tps" PARTITION OF "registry_numbers" FOR VALUES IN ('uk_tps');
CREATE TABLE "registry_numbers_uk_ctps" PARTITION OF "registry_numbers" FOR VALUES IN ('uk_ctps');

-- CreateIndex
CREATE INDEX "registry_imports_registry_imported_at_idx" ON "registry_imports"("registry", "imported_at");
