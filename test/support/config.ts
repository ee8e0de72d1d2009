import { ConfigError, loadConfig } from '../../src/config.js';

/** What loading the configuration from `env` complains of; empty when it loads. */
export function configProblems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}
