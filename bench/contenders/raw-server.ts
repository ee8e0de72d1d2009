import { createServer, type IncomingMessage } from 'node:http';
import pg from 'pg';
import { listenUntilTerm } from './listen.js';

// The floor for the reads the load benchmark times: node:http and one pg pool (20), answering the nested
// GraphQL query (POST /graphql) and the v1 lists (GET /api/v1/campaigns/, GET /api/v1/agents/active/)
// with the bytes our server answers, from one prepared statement each. No auth, no parsing of the query,
// no validation: the customer is fixed at start. Env: DATABASE_URL, BENCH_USER_ID. Prints
// `listening on <url>`.

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const userId = process.env.BENCH_USER_ID!;

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
// A JSON value's text, `null` for SQL NULL (to_json escapes the way JSON.stringify does).
const json = (value: string) => `coalesce(to_json(${value})::text, 'null')`;

// The whole answer as text, built in PostgreSQL: node only passes it on. $1 user, $2 campaigns, $3 contacts.
const NESTED = `
  SELECT '{"data":{"campaigns":{"edges":[' || coalesce(string_agg(
           '{"node":{"id":' || ${json('k.id')} || ',"name":' || ${json('k.name')} || ',"agent":{"name":' || ${json('a.name')} ||
           '},"contactGroup":{"name":' || ${json('g.name')} || ',"contacts":{"edges":[' || coalesce(c.edges, '') || ']}}}}',
           ',' ORDER BY k.created_at DESC, k.id DESC), '') || ']}}}' AS body
  FROM (SELECT id, name, agent_id, contact_group_id, created_at FROM campaigns
        WHERE user_id = $1::uuid ORDER BY created_at DESC, id DESC LIMIT $2) k
  JOIN agents a ON a.id = k.agent_id
  JOIN contact_groups g ON g.id = k.contact_group_id
  CROSS JOIN LATERAL (
    SELECT string_agg('{"node":{"id":' || ${json('x.id')} || ',"firstName":' || ${json("x.data->>'first_name'")} ||
                      ',"lastName":' || ${json("x.data->>'last_name'")} || ',"phoneNumber":' || ${json('x.phone_number')} || '}}',
                      ',' ORDER BY x.created_at, x.id) AS edges
    FROM (SELECT id, data, phone_number, created_at FROM contacts
          WHERE contact_group_id = g.id AND erased_at IS NULL ORDER BY created_at, id LIMIT $3) x) c`;

const PHONE_NUMBERS = (agent: string) => `
  coalesce((SELECT json_agg(json_build_object('id', p.id, 'number', p.number, 'label', p.label, 'is_primary', p.is_primary)
                            ORDER BY p.is_primary DESC, p.created_at, p.id)
            FROM phone_numbers p WHERE p.agent_id = ${agent}), '[]')`;

// The v1 lists come as json, which pg parses, and go out through JSON.stringify as our server's do: the
// jsonb columns then print the same. Key order is the serializers' (src/rest/serializers); calling_hours
// and schedule_config are rebuilt in that order, since jsonb keeps its own.
const CAMPAIGNS = `
  SELECT coalesce(json_agg(json_build_object(
           'id', k.id, 'name', k.name, 'description', k.description, 'status', k.status, 'paused_reason', k.paused_reason,
           'agent_id', k.agent_id, 'contact_group_id', k.contact_group_id, 'concurrent_calls', k.concurrent_calls,
           'max_retry_days', k.max_retry_days,
           'calling_hours', json_build_object('start', k.calling_hours->'start', 'end', k.calling_hours->'end'),
           'schedule_config', json_build_object(
             'max_attempts', k.schedule_config->'max_attempts', 'max_attempts_per_day', k.schedule_config->'max_attempts_per_day',
             'retry_interval_minutes', k.schedule_config->'retry_interval_minutes', 'retry_on', k.schedule_config->'retry_on'),
           'active_days', k.active_days, 'field_mappings', k.field_mappings, 'selected_contact_fields', k.selected_contact_fields,
           'timezone', k.timezone, 'call_insights', k.call_insights, 'post_call_analyzers', k.post_call_analyzers,
           'started_at', ${iso('k.started_at')}, 'completed_at', ${iso('k.completed_at')},
           'created_at', ${iso('k.created_at')}, 'updated_at', ${iso('k.updated_at')},
           'user_agents', json_build_object(
             'id', a.id, 'name', a.name, 'status', a.status, 'is_active', a.is_active, 'response_engine_type', a.response_engine_type,
             'phone_numbers', ${PHONE_NUMBERS('a.id')}),
           'contact_groups', json_build_object(
             'id', g.id, 'name', g.name, 'description', g.description, 'total', g.total, 'csv_headers', g.csv_headers,
             'created_at', ${iso('g.created_at')}))
         ORDER BY k.created_at DESC, k.id DESC), '[]') AS body
  FROM campaigns k JOIN agents a ON a.id = k.agent_id JOIN contact_groups g ON g.id = k.contact_group_id
  WHERE k.user_id = $1::uuid`;

const ACTIVE_AGENTS = `
  SELECT coalesce(json_agg(json_build_object(
           'id', a.id, 'user_id', a.user_id, 'template_id', a.template_id, 'name', a.name,
           'created_at', ${iso('a.created_at')}, 'updated_at', ${iso('a.updated_at')},
           'agent_templates', json_build_object(
             'id', t.id, 'name', t.name, 'description', t.description, 'template_key', t.template_key,
             'system_prompt_template', t.system_prompt_template, 'placeholder_schema', t.placeholder_schema,
             'agent_profile_defaults', t.agent_profile_defaults, 'llm_runtime_defaults', t.llm_runtime_defaults,
             'response_engine_type', t.response_engine_type, 'is_active', t.is_active,
             'created_at', ${iso('t.created_at')}, 'updated_at', ${iso('t.updated_at')}),
           'phone_numbers', ${PHONE_NUMBERS('a.id')},
           'campaigns', coalesce((SELECT json_agg(json_build_object('id', c.id, 'name', c.name, 'status', c.status)
                                                  ORDER BY c.created_at DESC, c.id DESC)
                                  FROM campaigns c WHERE c.agent_id = a.id), '[]'),
           'status', a.status, 'is_active', a.is_active, 'phone_number_id', a.phone_number_id,
           'response_engine_type', a.response_engine_type, 'llm_websocket_url', a.llm_websocket_url,
           'agent_config', a.agent_config, 'agent_profile', a.agent_profile, 'agent_variables', a.agent_variables,
           'llm_runtime_overrides', a.llm_runtime_overrides)
         ORDER BY a.created_at DESC, a.id DESC), '[]') AS body
  FROM agents a JOIN agent_templates t ON t.id = a.template_id
  WHERE a.user_id = $1::uuid AND a.status = 'active'`;

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
}

async function answer(req: IncomingMessage): Promise<string | undefined> {
  if (req.method === 'POST' && req.url === '/graphql') {
    const { variables } = JSON.parse(await readBody(req));
    const { rows } = await pool.query({ name: 'nested', text: NESTED, values: [userId, variables.first, variables.contacts] });
    return rows[0].body;
  }
  if (req.method === 'GET' && req.url === '/api/v1/campaigns/') {
    const { rows } = await pool.query({ name: 'campaigns', text: CAMPAIGNS, values: [userId] });
    return JSON.stringify(rows[0].body);
  }
  if (req.method === 'GET' && req.url === '/api/v1/agents/active/') {
    const { rows } = await pool.query({ name: 'active_agents', text: ACTIVE_AGENTS, values: [userId] });
    return JSON.stringify(rows[0].body);
  }
  return undefined;
}

const server = createServer((req, res) => {
  answer(req).then(
    (body) => (body === undefined ? res.writeHead(404).end() : res.writeHead(200, { 'content-type': 'application/json' }).end(body)),
    (error: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(error.message),
  );
});
listenUntilTerm(server, () => pool.end());
