import type { BrainTools } from './conversation.js';
import { END_CALL_TOOL } from './conversation.js';

// The tools the built-in brain offers its LLM. end_call is the brain's own (it ends the response with
// `end_call`); the others run through the in-call tools' runner once it is part of the service.

export const brainTools: BrainTools = {
  definitions: () => [END_CALL_TOOL],
  run: async (_env, _call, name) => ({ error: 'unknown_tool', message: `There is no tool named ${name}.` }),
};
