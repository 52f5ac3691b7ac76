/**
 * The models analysis and generation may use: `builtin` (rule-based, always there) and the
 * entries of `MODELS`, each an AI SDK model (OpenAI, Anthropic, or any OpenAI-compatible server:
 * Ollama, vLLM, LM Studio, llama.cpp's server). One place answers the allow-lists and builds models.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { Config } from '../../config.ts';
import { BadRequest } from '../../errors.ts';
import { builtinModel } from './builtin.ts';
import { localModel } from './localModel.ts';

export type ModelRole = 'analysis' | 'generation';

/** One entry of an allow-list, as `GET …/pipelines/{analysis,generation}/models` answers it. */
export type ModelView = {
  id: string;
  provider: string;
  model: string;
  description: string;
  capabilities: { toolCalls: boolean; structuredOutput: boolean; vision: boolean; languageModel: boolean };
  pricing: { inputPerMTok: string; outputPerMTok: string } | null;
};

const BUILTIN: ModelView = {
  id: 'builtin',
  provider: 'builtin',
  model: 'rules',
  description:
    'Rule-based, not a language model: reads the page model, fills the login or search form the prompt gives values for, follows the link the prompt quotes, and extracts the table or list that best matches the prompt. Offline and deterministic.',
  capabilities: { toolCalls: true, structuredOutput: true, vision: false, languageModel: false },
  pricing: null,
};

/** The allow-list of a role: builtin first, the local model (analysis), then the configured models with that role. */
export function allowedModels(config: Config, role: ModelRole): ModelView[] {
  const local = config.agents.localModel;
  return [
    BUILTIN,
    ...(local && role === 'analysis'
      ? [
          {
            id: 'local',
            provider: 'local',
            model: local.name,
            description:
              'A small language model running on this machine (node-llama-cpp, CPU). It chooses among the page model’s candidates under a JSON Schema grammar; it is weak at choosing right (docs/analysis-generation.md, Local models).',
            capabilities: { toolCalls: true, structuredOutput: true, vision: false, languageModel: true },
            pricing: null,
          },
        ]
      : []),
    ...config.agents.models
      .filter((entry) => entry.roles.includes(role))
      .map((entry) => ({
        id: entry.id,
        provider: entry.provider,
        model: entry.model,
        description: `${entry.model} through ${entry.provider}`,
        capabilities: { toolCalls: true, structuredOutput: true, vision: Boolean(entry.vision), languageModel: true },
        pricing:
          entry.inputPricePerMTok !== undefined || entry.outputPricePerMTok !== undefined
            ? { inputPerMTok: String(entry.inputPricePerMTok ?? 0), outputPerMTok: String(entry.outputPricePerMTok ?? 0) }
            : null,
      })),
  ];
}

/** The model `id` for `role`, or 400 naming the allowed ones. */
export function requireModel(config: Config, role: ModelRole, id: string): ModelView {
  const found = allowedModels(config, role).find((model) => model.id === id);
  if (!found) {
    const allowed = allowedModels(config, role).map((model) => model.id);
    throw new BadRequest('model_not_allowed', `The model "${id}" is not among the allowed ${role} models (${allowed.join(', ')})`, {
      issues: [{ path: ['model'], message: `not an allowed ${role} model` }],
    });
  }
  return found;
}

/** The AI SDK model behind an allowed id. */
export function languageModel(config: Config, role: ModelRole, id: string): LanguageModelV4 {
  if (id === 'builtin') return builtinModel(role);
  const local = config.agents.localModel;
  if (id === 'local' && local) return localModel(local.path, local.name);
  const entry = config.agents.models.find((model) => model.id === id);
  if (!entry) throw new Error(`model ${id} is not configured`);
  const apiKey = entry.apiKey ?? 'none';
  switch (entry.provider) {
    case 'openai':
      return createOpenAI({ apiKey, ...(entry.baseUrl ? { baseURL: entry.baseUrl } : {}) })(entry.model);
    case 'anthropic':
      return createAnthropic({ apiKey, ...(entry.baseUrl ? { baseURL: entry.baseUrl } : {}) })(entry.model);
    case 'openai-compatible':
      return createOpenAICompatible({ name: entry.id, baseURL: entry.baseUrl as string, apiKey, supportsStructuredOutputs: true })(
        entry.model,
      );
  }
}
