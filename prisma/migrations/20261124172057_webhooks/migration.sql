-- Webhooks to customers: endpoints, and an outbox of events and their deliveries. Events are written
-- in the transaction that made them (by the services, or by the triggers below for state that many
-- writers change), so none comes from a transaction that rolled back and none is lost before it is
-- queued. See src/services/webhooks.

-- CreateEnum
CREATE TYPE "WebhookMessageState" AS ENUM ('pending', 'succeeded', 'failed');

-- AlterTable
ALTER TABLE "credit_accounts" ADD COLUMN     "low_balance_threshold_cents" BIGINT;

-- CreateTable
CREATE TABLE "webhook_endpoints" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "url" VARCHAR(2048) NOT NULL,
    "description" VARCHAR(500) NOT NULL DEFAULT '',
    "event_types" TEXT[],
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "disabled_reason" VARCHAR(32),
    "secret" VARCHAR(100) NOT NULL,
    "previous_secret" VARCHAR(100),
    "previous_secret_expires_at" TIMESTAMPTZ(3),
    "failing_since" TIMESTAMPTZ(3),
    "deleted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_events" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "type" VARCHAR(64) NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_messages" (
    "id" UUID NOT NULL,
    "event_id" UUID NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "state" "WebhookMessageState" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "queued" BOOLEAN NOT NULL DEFAULT false,
    "last_status_code" INTEGER,
    "last_latency_ms" INTEGER,
    "last_error" VARCHAR(500),
    "last_attempt_at" TIMESTAMPTZ(3),
    "next_attempt_at" TIMESTAMPTZ(3),
    "delivered_at" TIMESTAMPTZ(3),
    "replay_of" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_messages_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "webhook_endpoints_user_id_created_at_idx" ON "webhook_endpoints"("user_id", "created_at");

-- CreateIndex
CREATE INDEX "webhook_events_user_id_created_at_idx" ON "webhook_events"("user_id", "created_at");

-- CreateIndex
CREATE INDEX "webhook_messages_endpoint_id_created_at_idx" ON "webhook_messages"("endpoint_id", "created_at");

-- AddForeignKey
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_messages" ADD CONSTRAINT "webhook_messages_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "webhook_events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_messages" ADD CONSTRAINT "webhook_messages_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- CreateIndex
CREATE INDEX "webhook_messages_unqueued_idx" ON "webhook_messages"("id") WHERE (NOT queued);

-- A time-ordered id made in the database, for events the triggers write.
CREATE FUNCTION webhook_uuid_v7() RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT encode(
    set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
      PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3) FROM 1 FOR 6), 52, 1), 53, 1),
    'hex')::uuid
$$;

-- The one place events fan out: `events` is an array of {user_id, type, data, endpoint_id?}. Each event
-- is kept once, with a delivery for every enabled endpoint of its user that takes its type (or for the
-- one endpoint named, a ping); an event no endpoint takes is not kept. Returns the deliveries made.
CREATE FUNCTION webhook_emit(events jsonb) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  made integer;
BEGIN
  WITH wanted AS (
    SELECT e.n, (e.value->>'user_id')::uuid AS user_id, e.value->>'type' AS type, e.value->'data' AS data,
           (e.value->>'endpoint_id')::uuid AS endpoint_id
    FROM jsonb_array_elements(events) WITH ORDINALITY AS e(value, n)
  ), targets AS (
    SELECT w.n, p.id AS endpoint_id
    FROM wanted w JOIN webhook_endpoints p ON p.user_id = w.user_id
    WHERE p.enabled AND p.deleted_at IS NULL
      AND CASE WHEN w.endpoint_id IS NULL THEN cardinality(p.event_types) = 0 OR w.type = ANY (p.event_types)
               ELSE p.id = w.endpoint_id END
  ), kept AS (
    SELECT w.*, webhook_uuid_v7() AS id FROM wanted w WHERE w.n IN (SELECT n FROM targets)
  ), events_made AS (
    INSERT INTO webhook_events (id, user_id, type, payload, created_at)
    SELECT id, user_id, type,
           jsonb_build_object('type', type, 'timestamp', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', data),
           now()
    FROM kept
  )
  INSERT INTO webhook_messages (id, event_id, endpoint_id, created_at)
  SELECT webhook_uuid_v7(), k.id, t.endpoint_id, now() FROM kept k JOIN targets t ON t.n = k.n;
  GET DIAGNOSTICS made = ROW_COUNT;
  RETURN made;
END
$$;

-- campaign.status_changed, whichever code path changed it.
CREATE FUNCTION webhook_campaign_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM webhook_emit(jsonb_build_array(jsonb_build_object(
    'user_id', NEW.user_id,
    'type', 'campaign.status_changed',
    'data', jsonb_build_object('campaign_id', NEW.id, 'name', NEW.name, 'status', NEW.status::text,
                               'previous_status', OLD.status::text, 'paused_reason', NEW.paused_reason))));
  RETURN NULL;
END
$$;

CREATE TRIGGER webhook_campaign_status AFTER UPDATE OF status ON campaigns
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION webhook_campaign_status();

-- credits.low: the credits (purchased and included, holds aside) fell below the customer's threshold.
CREATE FUNCTION webhook_credits_low() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM webhook_emit(jsonb_build_array(jsonb_build_object(
    'user_id', NEW.user_id,
    'type', 'credits.low',
    'data', jsonb_build_object('balance_cents', NEW.balance_cents + NEW.included_remaining_cents,
                               'threshold_cents', NEW.low_balance_threshold_cents))));
  RETURN NULL;
END
$$;

CREATE TRIGGER webhook_credits_low AFTER UPDATE OF balance_cents, included_remaining_cents ON credit_accounts
  FOR EACH ROW WHEN (NEW.low_balance_threshold_cents IS NOT NULL
    AND NEW.balance_cents + NEW.included_remaining_cents < NEW.low_balance_threshold_cents
    AND OLD.balance_cents + OLD.included_remaining_cents >= NEW.low_balance_threshold_cents)
  EXECUTE FUNCTION webhook_credits_low();
