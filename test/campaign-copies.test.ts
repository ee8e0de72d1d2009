import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallOutcome } from '../src/services/call-outcomes.js';
import { startTestApp, type TestApp } from './support/app.js';
import { contactRows, createCampaign, customer, dispatch, importGroup, type Customer } from './support/campaigns.js';
import { dialerEnv, ManualClock, recordingDialer } from './support/dialer.js';
import { createAgent } from './support/fixtures.js';
import { ALWAYS_OPEN } from './support/live.js';

// Clone (a campaign's settings, as a draft, optionally on another group or agent) and redial (its
// settings, over the contacts of its group it did not reach, or whose last call met picked outcomes),
// without copying or moving a contact.

const CLONE = `mutation ($id: UUID!, $input: CloneCampaignInput) { cloneCampaign(id: $id, input: $input) {
  id name status concurrentCalls callingHours { start end } scheduleConfig { maxAttempts } regionalRules contactGroup { id } agent { id } } }`;
const REDIAL = `mutation ($id: UUID!, $input: RedialCampaignInput) { redialCampaign(id: $id, input: $input) {
  id name status redialOutcomes redialOf { id } contactGroup { id } } }`;

let app: TestApp;
let who: Customer;
let source: string;
let people: string[];
beforeAll(async () => {
  app = await startTestApp();
  who = await customer(app, { contacts: 1, credits: 1_000_000 });
  const rows = contactRows(6);
  people = rows.map((r) => r.Phone!);
  who.groupId = await importGroup(app, who.token, rows, 'Spring list');
  await app.gql(`mutation ($p: String!) { addDoNotCall(input: { phoneNumber: $p }) { phoneNumber } }`, { p: people[5] }, who.token);
  source = (await createCampaign(app, who, { ...ALWAYS_OPEN, concurrent_calls: 6 })).id;
  expect((await dispatch(app, who.token, source)).status).toBe(202);
  const outcomes: CallOutcome[] = ['human', 'no_answer', 'voicemail', 'busy', 'human'];
  const run = recordingDialer(dialerEnv(app, new ManualClock(new Date(Date.now() + 1000))), (call) => ({
    outcome: outcomes[people.indexOf(call.to)]!,
    durationSeconds: 30,
  }));
  await run.run(source);
  expect((await app.prisma.campaign.findUniqueOrThrow({ where: { id: source } })).status).toBe('completed');
});
afterAll(() => app.close());

/** The numbers a campaign enrolled once it started. */
async function enrolled(campaignId: string) {
  const rows = await app.prisma.campaignContact.findMany({ where: { campaignId }, include: { contact: true } });
  return rows.map((r) => r.contact.phoneNumber).sort();
}

describe('a redial', () => {
  it('calls exactly the contacts its source called and did not reach, copying none', async () => {
    const contactsBefore = await app.prisma.contact.count({ where: { userId: who.id } });
    const { data, errors } = await app.gql(REDIAL, { id: source }, who.token);
    expect(errors).toBeUndefined();
    expect(data.redialCampaign).toMatchObject({
      name: 'Spring recall (redial)',
      status: 'draft',
      redialOutcomes: [],
      redialOf: { id: source },
      contactGroup: { id: who.groupId },
    });
    expect((await dispatch(app, who.token, data.redialCampaign.id)).status).toBe(202);
    expect(await enrolled(data.redialCampaign.id)).toEqual([people[1], people[2], people[3]].sort());
    expect(await app.prisma.contact.count({ where: { userId: who.id } })).toBe(contactsBefore);
    expect((await app.prisma.contactGroup.findUniqueOrThrow({ where: { id: who.groupId } })).total).toBe(6);
  });

  it('calls only the contacts whose last call met the picked outcomes', async () => {
    const { data } = await app.gql(REDIAL, { id: source, input: { name: 'Voicemails', outcomes: ['voicemail', 'no_answer'] } }, who.token);
    expect(data.redialCampaign.redialOutcomes.sort()).toEqual(['no_answer', 'voicemail']);
    await dispatch(app, who.token, data.redialCampaign.id);
    expect(await enrolled(data.redialCampaign.id)).toEqual([people[1], people[2]].sort());
  });

  it('refuses a source that called nobody, and another user’s campaign', async () => {
    const draft = (await createCampaign(app, who, ALWAYS_OPEN)).id;
    const refused = await app.gql(REDIAL, { id: draft }, who.token);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT' });
    const stranger = await customer(app, { contacts: 1, credits: 0 });
    expect((await app.gql(REDIAL, { id: source }, stranger.token)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await app.gql(CLONE, { id: source }, stranger.token)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const bad = await app.gql(REDIAL, { id: source, input: { outcomes: ['reached'] } }, who.token);
    expect(bad.errors).toBeDefined();
  });
});

describe('a clone', () => {
  it('is a draft with the same settings, on another group when asked', async () => {
    const other = await importGroup(app, who.token, contactRows(2), 'Autumn list');
    const { data, errors } = await app.gql(CLONE, { id: source, input: { contactGroupId: other } }, who.token);
    expect(errors).toBeUndefined();
    expect(data.cloneCampaign).toEqual({
      id: expect.any(String),
      name: 'Spring recall (copy)',
      status: 'draft',
      concurrentCalls: 6,
      callingHours: { start: '00:00', end: '24:00' },
      scheduleConfig: { maxAttempts: 1 },
      regionalRules: false,
      contactGroup: { id: other },
      agent: { id: who.agent.id },
    });
    const foreign = await customer(app, { contacts: 1, credits: 0 });
    const refused = await app.gql(CLONE, { id: source, input: { contactGroupId: foreign.groupId } }, who.token);
    expect(refused.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('a campaign split between agents', () => {
  const SET = `mutation ($id: UUID!, $input: SetCampaignVariantsInput!) { setCampaignVariants(id: $id, input: $input) { id } }`;
  const VARIANTS = `variants { name weight agent { id } }`;
  const HISTORY = `query ($id: UUID!) { campaign(id: $id) { history(first: 5) { edges { node { action changes { field to } } } } } }`;

  /** Each enrolled contact's variant, by contact. */
  async function variantsByContact(campaignId: string) {
    const names = new Map((await app.prisma.campaignVariant.findMany({ where: { campaignId } })).map((v) => [v.id, v.name]));
    const rows = await app.prisma.campaignContact.findMany({ where: { campaignId } });
    return new Map(rows.map((r) => [r.contactId, r.variantId && names.get(r.variantId)]));
  }

  it('carries its split to a clone and to a redial, where each contact keeps the variant its source gave it', async () => {
    const challenger = await createAgent(app, who.token, { name: 'Challenger' });
    const groupId = await importGroup(app, who.token, contactRows(20), 'Split list');
    const split = (await createCampaign(app, { ...who, groupId }, { ...ALWAYS_OPEN, name: 'Split', concurrent_calls: 20 })).id;
    const variants = [
      { agentId: who.agent.id, name: 'Control', weight: 50 },
      { agentId: challenger.id, name: 'Challenger', weight: 50 },
    ];
    expect((await app.gql(SET, { id: split, input: { variants } }, who.token)).errors).toBeUndefined();
    const expected = variants.map((v) => ({ name: v.name, weight: v.weight, agent: { id: v.agentId } }));

    const clone = await app.gql(`mutation ($id: UUID!) { cloneCampaign(id: $id) { id ${VARIANTS} } }`, { id: split }, who.token);
    expect(clone.errors).toBeUndefined();
    expect(clone.data.cloneCampaign.variants).toEqual(expected);
    // Its history says it was created with the split.
    const created = (await app.gql(HISTORY, { id: clone.data.cloneCampaign.id }, who.token)).data.campaign.history.edges;
    expect(created.map((e: { node: { action: string } }) => e.node.action)).toEqual(['created']);
    expect(created[0].node.changes).toContainEqual({
      field: 'variants',
      to: variants.map((v) => ({ agent_id: v.agentId, name: v.name, weight: v.weight })),
    });

    // Nobody answers: every contact is left to the redial.
    expect((await dispatch(app, who.token, split)).status).toBe(202);
    const run = recordingDialer(dialerEnv(app, new ManualClock(new Date(Date.now() + 1000))), () => ({
      outcome: 'no_answer',
      durationSeconds: 0,
    }));
    await run.run(split);
    expect((await app.prisma.campaign.findUniqueOrThrow({ where: { id: split } })).status).toBe('completed');
    const before = await variantsByContact(split);
    expect(new Set(before.values())).toEqual(new Set(['Control', 'Challenger']));

    const redial = await app.gql(`mutation ($id: UUID!) { redialCampaign(id: $id) { id ${VARIANTS} } }`, { id: split }, who.token);
    expect(redial.errors).toBeUndefined();
    expect(redial.data.redialCampaign.variants).toEqual(expected);
    expect((await dispatch(app, who.token, redial.data.redialCampaign.id)).status).toBe(202);
    // A contact's variant is drawn from the campaign's id and its own: a new draw would move about half of them.
    expect(await variantsByContact(redial.data.redialCampaign.id)).toEqual(before);
  });

  it('leaves out of a copy the variants whose agents were archived since, and a split of one', async () => {
    const [second, third] = [await createAgent(app, who.token, { name: 'Second' }), await createAgent(app, who.token, { name: 'Third' })];
    const id = (await createCampaign(app, who, ALWAYS_OPEN)).id;
    const variants = [
      { agentId: who.agent.id, name: 'Control', weight: 2 },
      { agentId: second.id, name: 'Second', weight: 1 },
      { agentId: third.id, name: 'Third', weight: 1 },
    ];
    expect((await app.gql(SET, { id, input: { variants } }, who.token)).errors).toBeUndefined();
    const cloneVariants = async () => {
      const { data, errors } = await app.gql(`mutation ($id: UUID!) { cloneCampaign(id: $id) { ${VARIANTS} } }`, { id }, who.token);
      expect(errors).toBeUndefined();
      return data.cloneCampaign.variants.map((v: { name: string }) => v.name);
    };
    expect((await app.request('DELETE', `/api/v1/agents/${third.id}/`, { token: who.token })).status).toBe(204);
    expect(await cloneVariants()).toEqual(['Control', 'Second']);
    expect((await app.request('DELETE', `/api/v1/agents/${second.id}/`, { token: who.token })).status).toBe(204);
    expect(await cloneVariants()).toEqual([]);
  });
});
