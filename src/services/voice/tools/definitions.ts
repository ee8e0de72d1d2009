// The functions an agent may call during a call: one list, which provisioning hands the voice provider
// (each a custom function posting to `${PUBLIC_BASE_URL}/voice/retell/tools/<name>`) and which the
// tools' own endpoints read their parameters by.

/** The JSON Schema of a function's arguments: always an object, as LLM function calling takes them. */
export interface JSONSchema {
  type: 'object';
  properties: Record<string, object>;
  required?: string[];
  additionalProperties?: boolean;
}

export interface InCallTool {
  name: string;
  description: string;
  parameters: JSONSchema;
}

const isoDateTime = { type: 'string', format: 'date-time', description: 'ISO 8601 with its UTC offset, e.g. 2026-12-03T15:30:00-05:00.' };

export const IN_CALL_TOOLS: readonly InCallTool[] = [
  {
    name: 'check_availability',
    description: 'Lists open appointment slots between two moments, so that two concrete times can be offered.',
    parameters: {
      type: 'object',
      properties: {
        from: { ...isoDateTime, description: 'Earliest start wanted (ISO 8601 with offset).' },
        to: { ...isoDateTime, description: 'Latest start wanted (ISO 8601 with offset).' },
        duration_minutes: { type: 'integer', minimum: 5, maximum: 240, description: 'Length of the appointment.' },
      },
      required: ['from', 'to'],
      additionalProperties: false,
    },
  },
  {
    name: 'book_appointment',
    description: 'Books the appointment the callee agreed to, at a slot check_availability offered.',
    parameters: {
      type: 'object',
      properties: {
        start: { ...isoDateTime, description: 'When the appointment starts (ISO 8601 with offset).' },
        duration_minutes: { type: 'integer', minimum: 5, maximum: 240, description: 'Length of the appointment.' },
        notes: { type: 'string', maxLength: 2000, description: 'What the appointment is for, in the callee’s words.' },
      },
      required: ['start'],
      additionalProperties: false,
    },
  },
  {
    name: 'add_to_do_not_call',
    description: 'Puts the callee’s number on the do-not-call list when they ask never to be called again.',
    parameters: {
      type: 'object',
      properties: { reason: { type: 'string', maxLength: 500, description: 'What the callee said.' } },
      additionalProperties: false,
    },
  },
  {
    name: 'schedule_callback',
    description: 'Arranges a call back at the moment the callee asks for.',
    parameters: {
      type: 'object',
      properties: {
        at: { ...isoDateTime, description: 'When to call back (ISO 8601 with offset).' },
        notes: { type: 'string', maxLength: 2000, description: 'What to pick up on.' },
      },
      required: ['at'],
      additionalProperties: false,
    },
  },
  {
    name: 'transfer_call',
    description: 'Transfers the call to a person at the business, when the callee asks for one.',
    parameters: {
      type: 'object',
      properties: { reason: { type: 'string', maxLength: 500, description: 'Why the callee wants a person.' } },
      additionalProperties: false,
    },
  },
];

/** transfer_call is offered only to an agent that has a number to transfer to. */
export function toolsFor(hasTransferNumber: boolean): readonly InCallTool[] {
  return IN_CALL_TOOLS.filter((tool) => tool.name !== 'transfer_call' || hasTransferNumber);
}
