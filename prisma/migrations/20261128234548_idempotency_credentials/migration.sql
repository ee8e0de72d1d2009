-- Idempotency keys remember which credential sent the first request, so that its kept response is
-- replayed to that credential only. Rows kept before this count as the user's tokens' (a token may do
-- whatever a key of its user may) and are gone within 24 hours.

-- CreateEnum
CREATE TYPE "CredentialScope" AS ENUM ('user', 'admin', 'read', 'full');

-- AlterTable
ALTER TABLE "idempotency_keys" ADD COLUMN     "api_key_id" UUID,
ADD COLUMN     "scope" "CredentialScope" NOT NULL DEFAULT 'user';
ALTER TABLE "idempotency_keys" ALTER COLUMN "scope" DROP DEFAULT;
