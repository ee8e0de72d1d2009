-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "AgentStatus" AS ENUM ('active', 'archived');

-- CreateEnum
CREATE TYPE "ContactStatus" AS ENUM ('active', 'invalid', 'do_not_call');

-- CreateEnum
CREATE TYPE "CampaignStatus" AS ENUM ('draft', 'scheduled', 'running', 'paused', 'completed', 'cancelled');

-- CreateEnum
CREATE TYPE "DialState" AS ENUM ('pending', 'dialing', 'done');

-- CreateEnum
CREATE TYPE "CallStatus" AS ENUM ('queued', 'ringing', 'in_progress', 'completed', 'no_answer', 'busy', 'failed', 'voicemail', 'canceled');

-- CreateEnum
CREATE TYPE "Sentiment" AS ENUM ('positive', 'neutral', 'negative', 'unknown');

-- CreateEnum
CREATE TYPE "HoldStatus" AS ENUM ('held', 'settled', 'released');

-- CreateEnum
CREATE TYPE "CreditTransactionKind" AS ENUM ('top_up', 'included_grant', 'call_charge', 'refund', 'adjustment');

-- CreateTable
CREATE TABLE "users" (
    "id" UUID NOT NULL,
    "default_country" VARCHAR(2) NOT NULL DEFAULT 'US',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agent_templates" (
    "id" UUID NOT NULL,
    "template_key" VARCHAR(64) NOT NULL,
    "name" VARCHAR(255) NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "system_prompt_template" TEXT NOT NULL,
    "placeholder_schema" JSONB NOT NULL,
    "agent_profile_defaults" JSONB NOT NULL DEFAULT '{}',
    "llm_runtime_defaults" JSONB NOT NULL DEFAULT '{}',
    "response_engine_type" VARCHAR(32) NOT NULL DEFAULT 'retell-llm',
    "is_active" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "agent_templates_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agents" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "template_id" UUID NOT NULL,
    "name" VARCHAR(255) NOT NULL,
    "status" "AgentStatus" NOT NULL DEFAULT 'active',
    "is_active" BOOLEAN NOT NULL DEFAULT true,
    "phone_number_id" UUID,
    "response_engine_type" VARCHAR(32) NOT NULL,
    "llm_websocket_url" VARCHAR(200),
    "system_prompt" TEXT NOT NULL,
    "agent_config" JSONB NOT NULL DEFAULT '{}',
    "agent_profile" JSONB NOT NULL DEFAULT '{}',
    "agent_variables" JSONB NOT NULL DEFAULT '{}',
    "llm_runtime_overrides" JSONB NOT NULL DEFAULT '{}',
    "provider_agent_id" VARCHAR(128),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "agents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "phone_numbers" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "agent_id" UUID,
    "number" VARCHAR(32) NOT NULL,
    "label" VARCHAR(64) NOT NULL DEFAULT '',
    "is_primary" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "phone_numbers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "contact_groups" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "name" VARCHAR(255) NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "total" INTEGER NOT NULL DEFAULT 0,
    "csv_headers" JSONB NOT NULL DEFAULT '[]',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "contact_groups_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "contacts" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "contact_group_id" UUID NOT NULL,
    "phone_number" VARCHAR(32),
    "status" "ContactStatus" NOT NULL DEFAULT 'active',
    "data" JSONB NOT NULL DEFAULT '{}',
    "timezone" VARCHAR(64),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "contacts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "do_not_call_entries" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "phone_number" VARCHAR(32) NOT NULL,
    "source" VARCHAR(32) NOT NULL DEFAULT 'manual',
    "reason" TEXT NOT NULL DEFAULT '',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "do_not_call_entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "campaigns" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "agent_id" UUID NOT NULL,
    "contact_group_id" UUID NOT NULL,
    "name" VARCHAR(255) NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "status" "CampaignStatus" NOT NULL DEFAULT 'draft',
    "paused_reason" VARCHAR(64),
    "concurrent_calls" INTEGER NOT NULL DEFAULT 1,
    "max_retry_days" INTEGER NOT NULL DEFAULT 0,
    "calling_hours" JSONB NOT NULL DEFAULT '{"start":"09:00","end":"17:00"}',
    "schedule_config" JSONB NOT NULL DEFAULT '{}',
    "active_days" JSONB NOT NULL DEFAULT '["mon","tue","wed","thu","fri"]',
    "field_mappings" JSONB NOT NULL DEFAULT '{}',
    "selected_contact_fields" JSONB NOT NULL DEFAULT '[]',
    "timezone" VARCHAR(64) NOT NULL DEFAULT 'UTC',
    "call_insights" JSONB NOT NULL DEFAULT '{}',
    "post_call_analyzers" JSONB NOT NULL DEFAULT '[]',
    "started_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "campaigns_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "campaign_contacts" (
    "id" UUID NOT NULL,
    "campaign_id" UUID NOT NULL,
    "contact_id" UUID NOT NULL,
    "state" "DialState" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "first_attempt_at" TIMESTAMPTZ(3),
    "last_attempt_at" TIMESTAMPTZ(3),
    "next_attempt_at" TIMESTAMPTZ(3),
    "lease_expires_at" TIMESTAMPTZ(3),
    "last_status" VARCHAR(32),
    "outcome" VARCHAR(32),
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "campaign_contacts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "call_attempts" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "campaign_id" UUID NOT NULL,
    "contact_id" UUID NOT NULL,
    "attempt_number" INTEGER NOT NULL,
    "status" "CallStatus" NOT NULL DEFAULT 'queued',
    "to_number" VARCHAR(32) NOT NULL,
    "from_number" VARCHAR(32),
    "provider_call_id" VARCHAR(128),
    "duration_seconds" INTEGER,
    "summary" TEXT,
    "sentiment" "Sentiment" NOT NULL DEFAULT 'unknown',
    "cost_cents" BIGINT NOT NULL DEFAULT 0,
    "recording_url" TEXT,
    "transcript" TEXT,
    "disconnect_reason" VARCHAR(64),
    "analysis" JSONB NOT NULL DEFAULT '{}',
    "lease_expires_at" TIMESTAMPTZ(3),
    "started_at" TIMESTAMPTZ(3),
    "ended_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "call_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "appointments" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "contact_id" UUID,
    "campaign_id" UUID,
    "call_attempt_id" UUID,
    "status" VARCHAR(32) NOT NULL DEFAULT 'scheduled',
    "scheduled_at" TIMESTAMPTZ(3),
    "timezone" VARCHAR(64),
    "contact_snapshot" JSONB NOT NULL DEFAULT '{}',
    "appointment_data" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "appointments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "credit_accounts" (
    "user_id" UUID NOT NULL,
    "balance_cents" BIGINT NOT NULL DEFAULT 0,
    "included_remaining_cents" BIGINT NOT NULL DEFAULT 0,
    "held_cents" BIGINT NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "credit_accounts_pkey" PRIMARY KEY ("user_id")
);

-- CreateTable
CREATE TABLE "credit_holds" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "call_attempt_id" UUID NOT NULL,
    "amount_cents" BIGINT NOT NULL,
    "status" "HoldStatus" NOT NULL DEFAULT 'held',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "closed_at" TIMESTAMPTZ(3),

    CONSTRAINT "credit_holds_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "credit_transactions" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "kind" "CreditTransactionKind" NOT NULL,
    "amount_cents" BIGINT NOT NULL,
    "balance_after_cents" BIGINT NOT NULL,
    "included_after_cents" BIGINT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "campaign_id" UUID,
    "call_attempt_id" UUID,
    "receipt_url" TEXT,
    "invoice_url" TEXT,
    "external_id" VARCHAR(255),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "credit_transactions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL,
    "source" VARCHAR(32) NOT NULL,
    "event_key" VARCHAR(255) NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "agent_templates_template_key_key" ON "agent_templates"("template_key");

-- CreateIndex
CREATE INDEX "agent_templates_is_active_name_idx" ON "agent_templates"("is_active", "name");

-- CreateIndex
CREATE UNIQUE INDEX "agents_phone_number_id_key" ON "agents"("phone_number_id");

-- CreateIndex
CREATE INDEX "agents_user_id_is_active_created_at_idx" ON "agents"("user_id", "is_active", "created_at");

-- CreateIndex
CREATE INDEX "agents_template_id_idx" ON "agents"("template_id");

-- CreateIndex
CREATE INDEX "phone_numbers_agent_id_idx" ON "phone_numbers"("agent_id");

-- CreateIndex
CREATE UNIQUE INDEX "phone_numbers_user_id_number_key" ON "phone_numbers"("user_id", "number");

-- CreateIndex
CREATE INDEX "contact_groups_user_id_created_at_idx" ON "contact_groups"("user_id", "created_at");

-- CreateIndex
CREATE INDEX "contacts_contact_group_id_status_id_idx" ON "contacts"("contact_group_id", "status", "id");

-- CreateIndex
CREATE INDEX "contacts_user_id_phone_number_idx" ON "contacts"("user_id", "phone_number");

-- CreateIndex
CREATE UNIQUE INDEX "contacts_contact_group_id_phone_number_key" ON "contacts"("contact_group_id", "phone_number");

-- CreateIndex
CREATE UNIQUE INDEX "do_not_call_entries_user_id_phone_number_key" ON "do_not_call_entries"("user_id", "phone_number");

-- CreateIndex
CREATE INDEX "campaigns_user_id_created_at_idx" ON "campaigns"("user_id", "created_at");

-- CreateIndex
CREATE INDEX "campaigns_user_id_status_idx" ON "campaigns"("user_id", "status");

-- CreateIndex
CREATE INDEX "campaigns_agent_id_status_idx" ON "campaigns"("agent_id", "status");

-- CreateIndex
CREATE INDEX "campaigns_contact_group_id_status_idx" ON "campaigns"("contact_group_id", "status");

-- CreateIndex
CREATE INDEX "campaign_contacts_campaign_id_state_next_attempt_at_idx" ON "campaign_contacts"("campaign_id", "state", "next_attempt_at");

-- CreateIndex
CREATE INDEX "campaign_contacts_state_lease_expires_at_idx" ON "campaign_contacts"("state", "lease_expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "campaign_contacts_campaign_id_contact_id_key" ON "campaign_contacts"("campaign_id", "contact_id");

-- CreateIndex
CREATE UNIQUE INDEX "call_attempts_provider_call_id_key" ON "call_attempts"("provider_call_id");

-- CreateIndex
CREATE INDEX "call_attempts_user_id_created_at_id_idx" ON "call_attempts"("user_id", "created_at" DESC, "id");

-- CreateIndex
CREATE INDEX "call_attempts_campaign_id_created_at_idx" ON "call_attempts"("campaign_id", "created_at");

-- CreateIndex
CREATE INDEX "call_attempts_campaign_id_status_idx" ON "call_attempts"("campaign_id", "status");

-- CreateIndex
CREATE INDEX "call_attempts_contact_id_created_at_idx" ON "call_attempts"("contact_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "call_attempts_campaign_id_contact_id_attempt_number_key" ON "call_attempts"("campaign_id", "contact_id", "attempt_number");

-- CreateIndex
CREATE INDEX "appointments_user_id_scheduled_at_idx" ON "appointments"("user_id", "scheduled_at");

-- CreateIndex
CREATE INDEX "appointments_user_id_created_at_idx" ON "appointments"("user_id", "created_at");

-- CreateIndex
CREATE INDEX "appointments_campaign_id_idx" ON "appointments"("campaign_id");

-- CreateIndex
CREATE INDEX "appointments_call_attempt_id_idx" ON "appointments"("call_attempt_id");

-- CreateIndex
CREATE UNIQUE INDEX "credit_holds_call_attempt_id_key" ON "credit_holds"("call_attempt_id");

-- CreateIndex
CREATE INDEX "credit_holds_user_id_status_idx" ON "credit_holds"("user_id", "status");

-- CreateIndex
CREATE UNIQUE INDEX "credit_transactions_external_id_key" ON "credit_transactions"("external_id");

-- CreateIndex
CREATE INDEX "credit_transactions_user_id_created_at_id_idx" ON "credit_transactions"("user_id", "created_at" DESC, "id");

-- CreateIndex
CREATE INDEX "credit_transactions_user_id_kind_created_at_idx" ON "credit_transactions"("user_id", "kind", "created_at");

-- CreateIndex
CREATE INDEX "credit_transactions_call_attempt_id_idx" ON "credit_transactions"("call_attempt_id");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_source_event_key_key" ON "webhook_deliveries"("source", "event_key");

-- AddForeignKey
ALTER TABLE "agents" ADD CONSTRAINT "agents_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agents" ADD CONSTRAINT "agents_template_id_fkey" FOREIGN KEY ("template_id") REFERENCES "agent_templates"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agents" ADD CONSTRAINT "agents_phone_number_id_fkey" FOREIGN KEY ("phone_number_id") REFERENCES "phone_numbers"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "phone_numbers" ADD CONSTRAINT "phone_numbers_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "phone_numbers" ADD CONSTRAINT "phone_numbers_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "contact_groups" ADD CONSTRAINT "contact_groups_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_contact_group_id_fkey" FOREIGN KEY ("contact_group_id") REFERENCES "contact_groups"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "do_not_call_entries" ADD CONSTRAINT "do_not_call_entries_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_contact_group_id_fkey" FOREIGN KEY ("contact_group_id") REFERENCES "contact_groups"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "campaign_contacts" ADD CONSTRAINT "campaign_contacts_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "campaign_contacts" ADD CONSTRAINT "campaign_contacts_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "call_attempts" ADD CONSTRAINT "call_attempts_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "call_attempts" ADD CONSTRAINT "call_attempts_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "call_attempts" ADD CONSTRAINT "call_attempts_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "appointments" ADD CONSTRAINT "appointments_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "appointments" ADD CONSTRAINT "appointments_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "appointments" ADD CONSTRAINT "appointments_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "appointments" ADD CONSTRAINT "appointments_call_attempt_id_fkey" FOREIGN KEY ("call_attempt_id") REFERENCES "call_attempts"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "credit_accounts" ADD CONSTRAINT "credit_accounts_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "credit_holds" ADD CONSTRAINT "credit_holds_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "credit_holds" ADD CONSTRAINT "credit_holds_call_attempt_id_fkey" FOREIGN KEY ("call_attempt_id") REFERENCES "call_attempts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "credit_transactions" ADD CONSTRAINT "credit_transactions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "credit_transactions" ADD CONSTRAINT "credit_transactions_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "credit_transactions" ADD CONSTRAINT "credit_transactions_call_attempt_id_fkey" FOREIGN KEY ("call_attempt_id") REFERENCES "call_attempts"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- Written by hand: Prisma cannot express CHECK constraints. Balances never go below zero, whatever the code.
ALTER TABLE "credit_accounts" ADD CONSTRAINT "credit_accounts_non_negative"
    CHECK ("balance_cents" >= 0 AND "included_remaining_cents" >= 0 AND "held_cents" >= 0);
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_concurrent_calls_positive" CHECK ("concurrent_calls" >= 1);
ALTER TABLE "contact_groups" ADD CONSTRAINT "contact_groups_total_non_negative" CHECK ("total" >= 0);
