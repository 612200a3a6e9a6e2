// pi's checks of a provider registration (`validateExtensionProvider`), so that a registration
// made once the runner is bound throws into the extension at once, as in pi. pi-rs checks every
// registration again (`extensions/provider_validation.rs`, the same rules and messages) and
// reports one rejected while extensions load as pi does (`Extension "<path>" error: <message>`).
//
// `bases` (from pi-rs at initialize): `builtinIds`, the built-in provider ids, and `modelsJson`,
// the agent dir's `models.json` providers. A built-in provider always lends a chat model's api and
// baseUrl; what it lends to other model types is known only to pi-rs, which then rejects.

const truthy = (value) => Boolean(value);
const typeOf = (model) => model?.type ?? "chat";

/** pi's `findModelDefaults` / `findExtensionModelDefaults` over known models. */
function defaults(models, kind, id, api) {
	const candidates = models.filter((model) => typeOf(model) === kind);
	return (
		candidates.find((model) => model.id === id) ??
		(api ? candidates.find((model) => model.api === api) : undefined) ??
		(kind === "chat" ? candidates.find((model) => model.api === "openai-completions") : undefined) ??
		candidates[0]
	);
}

/** pi's `applyModelsJson`: the models after the entry, or throws its error. */
function applyModelsJson(id, base, config) {
	if (!config) return [...base];
	if (config.oauth && !config.baseUrl) throw new Error(`Provider ${id}: "baseUrl" is required when "oauth" is set.`);
	const hasOverrides = config.modelOverrides && Object.keys(config.modelOverrides).length > 0;
	if (
		!config.models?.length &&
		!config.baseUrl &&
		!config.headers &&
		!config.compat &&
		!hasOverrides &&
		!config.apiKey &&
		!config.oauth &&
		config.authHeader === undefined
	) {
		throw new Error(`Provider ${id}: must specify "baseUrl", "headers", "compat", "modelOverrides", or "models".`);
	}
	const models = base.map((model) => ({ ...model, baseUrl: config.baseUrl ?? model.baseUrl }));
	for (const definition of config.models ?? []) {
		const found = defaults(models, "chat", definition.id, definition.api ?? config.api);
		const api = definition.api ?? config.api ?? found?.api;
		if (!api) throw new Error(`Provider ${id}, model ${definition.id}: no "api" specified. Set at provider or model level.`);
		const baseUrl = definition.baseUrl ?? config.baseUrl ?? found?.baseUrl;
		if (!baseUrl) throw new Error(`Provider ${id}: "baseUrl" is required when defining custom models.`);
		if (definition.contextWindow !== undefined && definition.contextWindow <= 0) {
			throw new Error(`Provider ${id}, model ${definition.id}: invalid contextWindow`);
		}
		if (definition.maxTokens !== undefined && definition.maxTokens <= 0) {
			throw new Error(`Provider ${id}, model ${definition.id}: invalid maxTokens`);
		}
		const model = { ...definition, api, baseUrl };
		const index = models.findIndex((entry) => typeOf(entry) === "chat" && entry.id === definition.id);
		if (index >= 0) models[index] = model;
		else models.push(model);
	}
	return models;
}

/** Throws pi's error when `config` cannot be registered as `id`. */
export function validateProvider(id, config, bases) {
	if (truthy(config?.streamSimple) && !truthy(config?.api)) {
		throw new Error(`Provider ${id}: "api" is required when registering streamSimple.`);
	}
	const builtin = (bases?.builtinIds ?? []).includes(id);
	// A stand-in chat model for the built-in provider's (its real api and baseUrl are pi-rs's).
	const base = builtin ? [{ id: "\u0000builtin", api: "\u0000builtin", baseUrl: "\u0000builtin" }] : [];
	const models = applyModelsJson(id, base, bases?.modelsJson?.[id]);
	for (const definition of config?.models ?? []) {
		const kind = typeOf(definition);
		if (builtin && kind !== "chat") continue;
		const found = defaults(models, kind, definition.id, definition.api);
		const api = definition.api ?? (kind === "chat" ? config.api : undefined) ?? found?.api;
		if (!api) {
			const level = kind === "chat" ? "model level or provider level" : "model level";
			throw new Error(`Provider ${id}, model ${definition.id}: no "api" specified. Set it at ${level}.`);
		}
		const baseUrl = definition.baseUrl ?? config.baseUrl ?? found?.baseUrl;
		if (!baseUrl) throw new Error(`Provider ${id}: "baseUrl" is required when defining custom models.`);
	}
}
