import { answererOf } from './calls.js';
import type { VoiceQuery } from './urls.js';
import type { StreamGrant } from '../../runtime/config.js';

// The TwiML our voice URL answers once Twilio's machine detection has decided who answered: a person
// is connected to the voice agent (a media stream to the agent runtime, outside this service, which
// reads the agent from us: ../../runtime/config.ts); a
// voicemail whose greeting has ended hears the campaign's message, if it has one; anything else is hung
// up on.

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Characters XML 1.0 cannot carry at all: controls other than tab, line feed and carriage return; U+FFFE and U+FFFF. */
function isXmlChar(c: string): boolean {
  const code = c.charCodeAt(0);
  return (code >= 0x20 || code === 0x09 || code === 0x0a || code === 0x0d) && code !== 0xfffe && code !== 0xffff;
}

/** Text as XML character data or an attribute value; characters XML cannot carry are dropped. */
export function xmlEscape(text: string): string {
  let out = '';
  for (const c of text) if (isXmlChar(c)) out += XML_ESCAPES[c] ?? c;
  return out;
}

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

/**
 * TwiML for a call whose detection says `answeredBy` (absent when Twilio could not tell). A person is
 * connected to the agent runtime with `grant`, the call's agent and its token; without one (a call that
 * is over, or not ours) there is no one to connect them to, and the call is hung up on.
 */
export function twimlFor(answeredBy: string | undefined, call: VoiceQuery, agentStreamUrl: string, grant?: StreamGrant): string {
  const answerer = answererOf(answeredBy);
  if (answerer === 'human') {
    if (!grant) return `${DECLARATION}<Response><Hangup/></Response>`;
    // The agent runtime hears who to talk to in the stream's start message (customParameters), and
    // fetches the agent's configuration from us with the token.
    const parameters: [string, string][] = [
      ['attempt_id', call.attempt_id],
      ['agent_id', grant.agentId],
      ['agent_version', String(grant.agentVersion)],
      ['token', grant.token],
      ['answered_by', answeredBy ?? 'unknown'],
    ];
    const tags = parameters.map(([name, value]) => `<Parameter name="${xmlEscape(name)}" value="${xmlEscape(value)}"/>`).join('');
    return `${DECLARATION}<Response><Connect><Stream url="${xmlEscape(agentStreamUrl)}">${tags}</Stream></Connect></Response>`;
  }
  if (answerer === 'machine_at_beep' && call.voicemail_message) {
    return `${DECLARATION}<Response><Say>${xmlEscape(call.voicemail_message)}</Say><Hangup/></Response>`;
  }
  return `${DECLARATION}<Response><Hangup/></Response>`;
}
