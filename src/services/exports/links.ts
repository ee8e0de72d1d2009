import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { keysStillHolding } from '../api-keys/api-keys.js';
import { getCampaign } from '../campaigns/campaigns.js';
import type { ServiceContext, ServiceEnv } from '../context.js';
import { NotFoundError } from '../errors.js';
import { parseInput, uuid, type RawInput } from '../validation.js';
import { signingSecret } from './store.js';
import { readCallRecordsFilter, type callRecordsInput, type CallRecordsFilter } from '../results/records.js';
import { cachedSecret } from '../signing-secrets.js';

// Download links for CSV exports, for clients of GraphQL (v1 clients ask for `?format=csv` with their
// token). A link is `/exports/<payload>.<signature>/`: the payload names the user, the export and when
// the link expires; the signature is an HMAC-SHA256 with a secret kept in the database, so a link made by
// one instance is read by any other. Whoever holds the link may download it until it expires, without a
// token, as with a cloud storage signed URL: it lives minutes. A link made with an API key names the key
// too, and stops working when the key is revoked or expires.

export const EXPORT_KINDS = ['call_history', 'contact_outcomes'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];
/** What a link may name: an export of EXPORT_KINDS, or the call records over a range (results/records.ts). */
const LINK_KINDS = [...EXPORT_KINDS, 'call_records'] as const;
export type LinkKind = (typeof LINK_KINDS)[number];
export const LINK_MINUTES = 15;
const SECRET_NAME = 'export-links';

const linkInput = z
  .object({ kind: z.enum(EXPORT_KINDS), campaign_id: uuid.optional() })
  .refine((input) => input.kind !== 'contact_outcomes' || input.campaign_id, {
    path: ['campaign_id'],
    error: 'This field is required for contact outcomes.',
  });

export interface ExportLink {
  path: string;
  expiresAt: Date;
}

/** What a link gives access to. */
export interface LinkedExport {
  userId: string;
  kind: LinkKind;
  campaignId?: string | undefined;
  /** For call_records: the range and number they are of. */
  records?: CallRecordsFilter | undefined;
}

const secretOf = cachedSecret((sql, fresh) => signingSecret(sql, SECRET_NAME, fresh));

const sign = (secret: Buffer, payload: string) => createHmac('sha256', secret).update(payload).digest('base64url');

/** A link to one of the caller's exports, valid for LINK_MINUTES; another customer's campaign is a 404. */
export async function createExportLink(ctx: ServiceContext, raw: RawInput<typeof linkInput>): Promise<ExportLink> {
  const input = parseInput(linkInput, raw);
  if (input.campaign_id) await getCampaign(ctx, input.campaign_id);
  return signedLink(ctx, { k: input.kind, ...(input.campaign_id ? { c: input.campaign_id } : {}) });
}

/** A link to the caller's call records placed in [from, to), of one number if given, valid for LINK_MINUTES. */
export async function createCallRecordsLink(ctx: ServiceContext, raw: RawInput<typeof callRecordsInput>): Promise<ExportLink> {
  const filter = readCallRecordsFilter(raw);
  const records = { f: filter.from.getTime(), t: filter.to.getTime(), ...(filter.phone_number ? { n: filter.phone_number } : {}) };
  return signedLink(ctx, { k: 'call_records', r: records });
}

async function signedLink(ctx: ServiceContext, what: Pick<z.input<typeof linkedPayload>, 'k' | 'c' | 'r'>): Promise<ExportLink> {
  const expiresAt = new Date(ctx.clock.now().getTime() + LINK_MINUTES * 60_000);
  const linked = { u: ctx.user.id, ...(ctx.user.apiKey ? { a: ctx.user.apiKey.id } : {}), ...what, e: expiresAt.getTime() };
  const payload = Buffer.from(JSON.stringify(linked)).toString('base64url');
  return { path: `/exports/${payload}.${sign(await secretOf(ctx.sql), payload)}/`, expiresAt };
}

const linkedPayload = z.object({
  u: uuid,
  a: uuid.optional(),
  k: z.enum(LINK_KINDS),
  c: uuid.optional(),
  r: z.object({ f: z.number(), t: z.number(), n: z.string().optional() }).optional(),
  e: z.number(),
});

/** What a link gives access to; a link that is malformed, forged or expired, or whose API key no longer holds, is a 404. */
export async function readExportLink(env: ServiceEnv, token: string): Promise<LinkedExport> {
  const [payload, signature, ...rest] = token.split('.');
  if (!payload || !signature || rest.length > 0) throw new NotFoundError('ExportLink');
  const expected = Buffer.from(sign(await secretOf(env.sql), payload));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new NotFoundError('ExportLink');
  let parsed: z.output<typeof linkedPayload>;
  try {
    parsed = linkedPayload.parse(JSON.parse(Buffer.from(payload, 'base64url').toString()));
  } catch {
    throw new NotFoundError('ExportLink');
  }
  const now = env.clock.now();
  if (parsed.e <= now.getTime()) throw new NotFoundError('ExportLink');
  if (parsed.a && !(await keysStillHolding(env.sql, [parsed.a], now)).has(parsed.a)) throw new NotFoundError('ExportLink');
  const records = parsed.r && { from: new Date(parsed.r.f), to: new Date(parsed.r.t), phone_number: parsed.r.n };
  return { userId: parsed.u, kind: parsed.k, campaignId: parsed.c, records };
}
