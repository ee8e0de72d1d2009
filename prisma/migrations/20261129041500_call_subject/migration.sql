-- A campaign may name the subject of its calls: the frequency caps that count per subject (Florida,
-- Oklahoma, Maryland) then count the calls of the customer's campaigns of that subject and of those that
-- name none. The history records it, and the purpose, as it records the other settings.
ALTER TABLE "campaigns" ADD COLUMN "call_subject" VARCHAR(64);

CREATE OR REPLACE FUNCTION campaign_history() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  tracked text[] := ARRAY['name', 'description', 'agent_id', 'contact_group_id', 'status', 'paused_reason', 'concurrent_calls',
    'max_retry_days', 'calling_hours', 'schedule_config', 'active_days', 'field_mappings', 'selected_contact_fields', 'timezone',
    'call_insights', 'post_call_analyzers', 'spend_cap_cents', 'required_consent', 'regional_rules', 'started_at',
    'booking_calendar', 'transfer_number', 'purpose', 'call_subject'];
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
