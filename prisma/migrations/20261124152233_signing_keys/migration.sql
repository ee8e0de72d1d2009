-- Signing keys: secrets the service signs links with, shared by every instance.

-- CreateTable
CREATE TABLE "signing_keys" (
    "name" VARCHAR(64) NOT NULL,
    "secret" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "signing_keys_pkey" PRIMARY KEY ("name")
);
