import { describe, expect, it } from 'vitest';
import { attemptIdOf, callResultOf, retellCall } from '../src/services/voice/providers/retell/calls.js';

// What a Retell call object means for our attempt: the mapping alone, without HTTP or a database.

const ATTEMPT = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';

function call(fields: Record<string, unknown>) {
  return retellCall.parse({ call_id: 'call_1', call_status: 'ended', metadata: { attempt_id: ATTEMPT }, ...fields });
}

describe('Retell calls as our results', () => {
  it.each([
    ['user_hangup', 'ended', 'human'],
    ['agent_hangup', 'ended', 'human'],
    ['call_transfer', 'ended', 'human'],
    ['inactivity', 'ended', 'human'],
    ['max_duration_reached', 'ended', 'human'],
    ['voicemail_reached', 'ended', 'voicemail'],
    ['ivr_reached', 'ended', 'ivr'],
    ['dial_no_answer', 'not_connected', 'no_answer'],
    ['dial_busy', 'not_connected', 'busy'],
    ['user_declined', 'not_connected', 'busy'],
    ['dial_failed', 'not_connected', 'failed'],
    ['invalid_destination', 'not_connected', 'invalid_number'],
    ['marked_as_spam', 'not_connected', 'failed'],
    ['concurrency_limit_reached', 'error', 'failed'],
    ['error_llm_websocket_lost_connection', 'error', 'failed'],
    ['a_reason_retell_adds_later', 'ended', 'human'],
    ['another_new_reason', 'not_connected', 'failed'],
  ])('maps disconnection_reason %s (call_status %s) to %s', (reason, callStatus, outcome) => {
    expect(callResultOf(ATTEMPT, call({ disconnection_reason: reason, call_status: callStatus })).outcome).toBe(outcome);
  });

  it('counts a started second as a whole one, from duration_ms or else the timestamps, and 0 when never connected', () => {
    expect(callResultOf(ATTEMPT, call({ disconnection_reason: 'user_hangup', duration_ms: 10_001 })).durationSeconds).toBe(11);
    expect(callResultOf(ATTEMPT, call({ disconnection_reason: 'user_hangup', duration_ms: 10_000 })).durationSeconds).toBe(10);
    expect(
      callResultOf(ATTEMPT, call({ disconnection_reason: 'user_hangup', start_timestamp: 1_000, end_timestamp: 4_500 })).durationSeconds,
    ).toBe(4);
    expect(
      callResultOf(ATTEMPT, call({ disconnection_reason: 'dial_no_answer', call_status: 'not_connected', duration_ms: 25_000 }))
        .durationSeconds,
    ).toBe(0);
  });

  it('takes summary, sentiment and the analysis; a call the analysis found in voicemail is voicemail', () => {
    const analysis = {
      call_summary: 'Left a message.',
      user_sentiment: 'Neutral',
      call_successful: false,
      in_voicemail: true,
      custom_analysis_data: { x: 1 },
    };
    expect(
      callResultOf(ATTEMPT, call({ disconnection_reason: 'user_hangup', duration_ms: 30_000, call_analysis: analysis })),
    ).toMatchObject({
      attemptId: ATTEMPT,
      outcome: 'voicemail',
      summary: 'Left a message.',
      sentiment: 'neutral',
      analysis,
    });
    for (const [given, ours] of [
      ['Positive', 'positive'],
      ['Negative', 'negative'],
      ['Unknown', 'unknown'],
    ]) {
      expect(callResultOf(ATTEMPT, call({ call_analysis: { user_sentiment: given } })).sentiment).toBe(ours);
    }
    expect(callResultOf(ATTEMPT, call({ disconnection_reason: 'user_hangup' })).sentiment).toBeUndefined();
  });

  it('books an appointment from custom_analysis_data.appointment_time only with an explicit offset', () => {
    const booked = (data: Record<string, unknown>, summary = 'Booked.') =>
      callResultOf(ATTEMPT, call({ call_analysis: { call_summary: summary, custom_analysis_data: data } })).appointment;
    expect(booked({ appointment_time: '2026-12-03T15:30:00-05:00', appointment_notes: 'Cleaning' })).toEqual({
      scheduledAt: new Date('2026-12-03T20:30:00Z'),
      notes: 'Cleaning',
    });
    expect(booked({ appointment_time: '2026-12-03T20:30Z' })).toEqual({ scheduledAt: new Date('2026-12-03T20:30:00Z'), notes: 'Booked.' });
    for (const value of ['2026-12-03T15:30:00', '2026-12-03', 'tomorrow at 3', '2026-13-45T99:00:00Z', 20261203, true]) {
      expect(booked({ appointment_time: value }), String(value)).toBeUndefined();
    }
  });

  it('puts the number on the do-not-call list when custom_analysis_data.do_not_call is true', () => {
    const asked = (value: unknown) =>
      callResultOf(ATTEMPT, call({ call_analysis: { custom_analysis_data: { do_not_call: value } } })).doNotCall;
    expect(asked(true)).toBe(true);
    expect(asked('true')).toBe(true);
    for (const value of [false, 'false', 'yes', 1, null]) expect(asked(value)).toBeUndefined();
  });

  it('tells voicemail, a message left, and a screened call apart from a person', () => {
    const voicemail = (fields: Parameters<typeof call>[0]) => callResultOf(ATTEMPT, call(fields));
    expect(voicemail({ disconnection_reason: 'voicemail_reached' })).toMatchObject({ outcome: 'voicemail', messageLeft: false });
    expect(
      voicemail({
        disconnection_reason: 'agent_hangup',
        metadata: { attempt_id: ATTEMPT, leave_voicemail: true },
        call_analysis: { in_voicemail: true },
      }),
    ).toMatchObject({ outcome: 'voicemail', messageLeft: true });
    expect(
      voicemail({ disconnection_reason: 'user_hangup', call_analysis: { custom_analysis_data: { call_screened: true } } }).outcome,
    ).toBe('call_screening');
    expect(voicemail({ disconnection_reason: 'user_hangup' })).toMatchObject({ outcome: 'human', messageLeft: undefined });
  });

  it('finds our attempt id in the metadata, and nothing in anything else', () => {
    expect(attemptIdOf(call({}))).toBe(ATTEMPT);
    expect(attemptIdOf(call({ metadata: { attempt_id: ATTEMPT.toUpperCase() } }))).toBe(ATTEMPT);
    for (const metadata of [undefined, null, 'x', { attempt_id: 'not-a-uuid' }, { attemptId: ATTEMPT }]) {
      expect(attemptIdOf(call({ metadata }))).toBeNull();
    }
  });
});
