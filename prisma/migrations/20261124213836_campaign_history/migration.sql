-- CreateTable
CREATE TABLE "campaign_changes" (
    "id" UUID NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "campaign_id" UUID NOT NULL,
    "actor" VARCHAR(64) NOT NULL,
    "action" VARCHAR(32) NOT NULL,
    "changes" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "campaign_changes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "campaign_changes_campaign_id_seq_idx" ON "campaign_changes"("campaign_id", "seq");

-- AddForeignKey
ALTER TABLE "campaign_changes" ADD CONSTRAINT "campaign_changes_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every change of a campaign's settings or status, whatever code path made it: the fields that changed,
-- from what to what, and who (the transaction's `callflow.actor`, set by the service that acts for a
-- user or an API key; `system` when none did: the dialer's pauses and completions, the scheduler).
CREATE FUNCTION campaign_history() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  tracked text[] := ARRAY['name', 'description', 'agent_id', 'contact_group_id', 'status', 'paused_reason', 'concurrent_calls',
    'max_retry_days', 'calling_hours', 'schedule_config', 'active_days', 'field_mappings', 'selected_contact_fields', 'timezone',
    'call_insights', 'post_call_analyzers', 'spend_cap_cents', 'required_consent', 'regional_rules', 'started_at'];
  before jsonb := CASE WHEN TG_OP = 'UPDATE' THEN to_jsonb(OLD) ELSE '{}'::jsonb END;
  after jsonb := to_jsonb(NEW);
  changed jsonb := '{}'::jsonb;
  field text;
  action text;
BEGIN
  FOREACH field IN ARRAY tracked LOOP
    IF TG_OP = 'INSERT' OR before -> field IS DISTINCT FROM after -> field THEN
      changed := changed || jsonb_build_object(field, jsonb_build_object('from', before -> field, 'to', after -> field));
    END IF;
  END LOOP;
  IF changed = '{}'::jsonb THEN
    RETURN NULL;
  END IF;
  action := CASE
    WHEN TG_OP = 'INSERT' THEN 'created'
    WHEN OLD.status IS NOT DISTINCT FROM NEW.status THEN 'edited'
    WHEN NEW.status = 'running' AND OLD.status = 'paused' THEN 'resumed'
    WHEN NEW.status = 'running' THEN 'dispatched'
    ELSE NEW.status::text
  END;
  INSERT INTO campaign_changes (id, campaign_id, actor, action, changes, created_at)
  VALUES (webhook_uuid_v7(), NEW.id, coalesce(nullif(current_setting('callflow.actor', true), ''), 'system'), action, changed, now());
  RETURN NULL;
END
$$;

CREATE TRIGGER campaign_history AFTER INSERT OR UPDATE ON campaigns FOR EACH ROW EXECUTE FUNCTION campaign_history();

-- Campaigns made before the history was kept start theirs with what they are now.
INSERT INTO campaign_changes (id, campaign_id, actor, action, changes, created_at)
SELECT webhook_uuid_v7(), k.id, 'system', 'created',
       (SELECT jsonb_object_agg(f, jsonb_build_object('from', NULL, 'to', to_jsonb(k) -> f))
        FROM unnest(ARRAY['name', 'agent_id', 'contact_group_id', 'status', 'concurrent_calls']) AS f),
       k.created_at
FROM campaigns k ORDER BY k.created_at;
