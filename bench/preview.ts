import pg from 'pg';
import areaCodes from '../src/services/calling-rules/data/nanp-area-codes.json' with { type: 'json' };
import { median, round, startServer, tokenFor, withDatabase } from './support.js';

// The dispatch preview (GET /api/v1/campaigns/{id}/preview/) of a draft campaign over 100,000 contacts on
// PostgreSQL: numbers of every NANP area code the rules know and a tenth from Europe, a few with their
// own zone, the consent the campaign requires held by nine in ten, some on the do-not-call list.
// Target: under 2 s for the whole answer (every contact judged, the first page sent).

const CONTACTS = Number(process.env.BENCH_PREVIEW_CONTACTS ?? 100_000);
const RUNS = Number(process.env.BENCH_PREVIEW_RUNS ?? 7);
const WARMUP = 2;

const ids = {
  user: '0000000b-0000-4000-8000-000000000001',
  agent: '0000000b-0000-4000-8000-000000000002',
  group: '0000000b-0000-4000-8000-000000000003',
  campaign: '0000000b-0000-4000-8000-000000000004',
};
const contactId = (expr: string) => `('0000000c-0000-7000-8000-' || lpad(to_hex(${expr}), 12, '0'))::uuid`;

async function seedPreview(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const codes = Object.keys(areaCodes.codes);
  try {
    await client.query('BEGIN');
    await client.query('INSERT INTO users (id) VALUES ($1)', [ids.user]);
    await client.query(
      `INSERT INTO agents (id, user_id, template_id, name, response_engine_type, system_prompt, updated_at)
       SELECT $1, $2, id, 'Bench agent', response_engine_type, 'Hello', now() FROM agent_templates ORDER BY template_key LIMIT 1`,
      [ids.agent, ids.user],
    );
    await client.query(`INSERT INTO contact_groups (id, user_id, name, total, updated_at) VALUES ($1, $2, 'Bench group', $3, now())`, [
      ids.group,
      ids.user,
      CONTACTS,
    ]);
    await client.query(
      `INSERT INTO campaigns (id, user_id, agent_id, contact_group_id, name, status, required_consent, regional_rules, timezone, updated_at)
       VALUES ($1, $2, $3, $4, 'Bench preview', 'draft', '{calls}', true, 'America/Chicago', now())`,
      [ids.campaign, ids.user, ids.agent, ids.group],
    );
    // Contact i: a NANP number of area code i mod n, every tenth a European one, every fiftieth with its own zone.
    await client.query(
      `INSERT INTO contacts (id, user_id, contact_group_id, phone_number, status, name, timezone, created_at, updated_at)
       SELECT ${contactId('i')}, $1, $2,
              CASE i % 10 WHEN 0 THEN (ARRAY['+4420', '+4930', '+331', '+3491'])[i % 4 + 1] || lpad((i % 10000000)::text, 7, '0')
                   ELSE '+1' || ($3::text[])[i % cardinality($3::text[]) + 1] || lpad((i % 10000000)::text, 7, '0') END,
              'active', 'Person ' || i, CASE WHEN i % 50 = 7 THEN 'Europe/Paris' END, now(), now()
       FROM generate_series(1, $4) AS i`,
      [ids.user, ids.group, codes, CONTACTS],
    );
    await client.query(
      `INSERT INTO contact_consents (id, user_id, contact_id, kind, source, obtained_at)
       SELECT gen_random_uuid(), $1, ${contactId('i')}, 'calls', 'bench', now() FROM generate_series(1, $2) AS i WHERE i % 10 <> 3`,
      [ids.user, CONTACTS],
    );
    await client.query(
      `INSERT INTO do_not_call_entries (id, user_id, phone_number, source, reason, created_at)
       SELECT gen_random_uuid(), $1, phone_number, 'bench', '', now() FROM contacts WHERE user_id = $1 AND get_byte(uuid_send(id), 15) % 97 = 0`,
      [ids.user],
    );
    await client.query('COMMIT');
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
}

export async function benchPreview() {
  return withDatabase(async (url) => {
    const server = await startServer(url);
    try {
      await seedPreview(url);
      const token = await tokenFor(ids.user);
      const times: number[] = [];
      let body: { contacts: number; to_call: number; by_rule: Record<string, number> } | undefined;
      for (let run = 0; run < WARMUP + RUNS; run += 1) {
        const started = performance.now();
        const res = await fetch(`${server.url}/api/v1/campaigns/${ids.campaign}/preview/?limit=50`, {
          headers: { authorization: `Bearer ${token}` },
        });
        body = (await res.json()) as typeof body;
        if (res.status !== 200) throw new Error(`preview answered ${res.status}: ${JSON.stringify(body).slice(0, 500)}`);
        if (run >= WARMUP) times.push(performance.now() - started);
      }
      const medianMs = round(median(times));
      return {
        name: 'dispatch preview (REST, PostgreSQL)',
        contacts: body!.contacts,
        toCall: body!.to_call,
        byRule: JSON.stringify(body!.by_rule),
        runs: RUNS,
        medianMs,
        maxMs: round(Math.max(...times)),
        runsMs: times.map((t) => round(t, 0)).join(' '),
        targetMet: medianMs < 2000,
      };
    } finally {
      await server.stop();
    }
  });
}
