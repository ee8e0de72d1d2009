-- Computed columns for what the nested query reads and PostGraphile (v4 and v5) cannot express on its own:
-- the names inside the jsonb `data`, and a group's contacts without the erased ones, in our order (SQL
-- functions, STABLE, so that PostgreSQL inlines them). Created in the bench database only, never in a migration.
CREATE OR REPLACE FUNCTION contacts_first_name(c contacts) RETURNS text
  AS $$ SELECT c.data->>'first_name' $$ LANGUAGE sql STABLE;
CREATE OR REPLACE FUNCTION contacts_last_name(c contacts) RETURNS text
  AS $$ SELECT c.data->>'last_name' $$ LANGUAGE sql STABLE;
CREATE OR REPLACE FUNCTION contact_groups_live_contacts(g contact_groups) RETURNS SETOF contacts
  AS $$ SELECT * FROM contacts c WHERE c.contact_group_id = g.id AND c.erased_at IS NULL ORDER BY c.created_at, c.id $$
  LANGUAGE sql STABLE;
