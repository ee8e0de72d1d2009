// The tools an agent's LLM may call during a call, as the LLM sees them: a name, what it does, and the
// JSON Schema of its arguments. Retell is pointed at `${PUBLIC_BASE_URL}/voice/retell/tools/<name>` for
// each; end_call and transfer_call are Retell's own tools (transfer_call dials the campaign's transfer
// number). Plain data: run.ts parses the same arguments with zod, and a test holds the two together.

export interface InCallToolDefinition {
  name: string;
  description: string;
  parameters: {
    type: 'object';
    properties: Record<string, Record<string, unknown>>;
    required?: string[];
  };
}

export const IN_CALL_TOOLS: readonly InCallToolDefinition[] = [
  {
    name: 'check_availability',
    description:
      'Lists open appointment slots of the booking calendar. Call it before offering times to the callee, and again when they ask for another day.',
    parameters: {
      type: 'object',
      properties: {
        date: {
          type: 'string',
          pattern: '^\\d{4}-\\d{2}-\\d{2}$',
          description: "A day (YYYY-MM-DD) in the calendar's time zone; leave it out for the next open slots from now.",
        },
        limit: { type: 'integer', minimum: 1, maximum: 10, description: 'How many slots to list (default 5).' },
      },
    },
  },
  {
    name: 'book_appointment',
    description:
      'Books one open slot for the callee, at once. Use a start exactly as check_availability gave it. Tell the callee the result; if the slot was just taken, offer one of the alternatives.',
    parameters: {
      type: 'object',
      properties: {
        start: {
          type: 'string',
          description: 'The slot\'s start, exactly as check_availability gave it (ISO 8601 with offset, e.g. "2026-12-03T09:00:00-05:00").',
        },
        notes: { type: 'string', maxLength: 1000, description: 'What the appointment is for, in a sentence.' },
      },
      required: ['start'],
    },
  },
  {
    name: 'add_to_do_not_call',
    description:
      'Puts the callee on the do-not-call list at once, when they ask not to be called again: no campaign calls them again. Confirm it to them, then end the call.',
    parameters: {
      type: 'object',
      properties: { reason: { type: 'string', maxLength: 500, description: 'What the callee said, in a few words.' } },
    },
  },
  {
    name: 'schedule_callback',
    description:
      "Schedules a call back at the time the callee names, in the callee's own time zone. If that time is outside the allowed calling hours, the answer gives the nearest allowed time to offer instead.",
    parameters: {
      type: 'object',
      properties: {
        local_time: {
          type: 'string',
          pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}$',
          description: "The callee's local date and time, YYYY-MM-DDTHH:MM (24-hour clock).",
        },
        note: { type: 'string', maxLength: 500, description: 'Why they want the call back, in a few words.' },
      },
      required: ['local_time'],
    },
  },
  {
    name: 'transfer_call',
    description: 'Transfers the call to a person at the business when the callee asks for one or the question is beyond you.',
    parameters: { type: 'object', properties: {} },
  },
  {
    name: 'end_call',
    description: 'Ends the call politely once the conversation is over or the callee asks to hang up.',
    parameters: { type: 'object', properties: {} },
  },
];

/** The tools served by us as the provider's custom functions; end_call and transfer_call are the provider's own. */
export const SERVED_TOOLS: readonly InCallToolDefinition[] = IN_CALL_TOOLS.filter(
  (tool) => tool.name !== 'end_call' && tool.name !== 'transfer_call',
);
