import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import { IN_CALL_TOOLS } from '../tools/definitions.js';
import { runInCallTool } from '../tools/run.js';
import type { BrainTools } from './conversation.js';

// The built-in brain offers its LLM the in-call tools as Retell's LLM gets them, and runs them through
// the same runner as Retell's custom functions: the same tools, the same rules. end_call ends the
// response itself, and transfer_call's answer names the number the call is transferred to.

const DEFINITIONS: readonly ChatCompletionFunctionTool[] = IN_CALL_TOOLS.map((tool) => ({
  type: 'function',
  function: { name: tool.name, description: tool.description, parameters: tool.parameters },
}));

export const brainTools: BrainTools = {
  definitions: () => DEFINITIONS,
  run: (env, call, name, args) => runInCallTool(env, { name, args, attemptId: call.attemptId, providerCallId: call.providerCallId }),
};
