// A provider's `oauth` (`registerProvider(name, { oauth: { login, refreshToken, getApiKey } })`)
// run for pi-rs: `provider.oauth.login` calls `login` with pi's callbacks, adapted as pi adapts
// them (`onAuth` → an `auth_url` notice, `onDeviceCode` → `device_code`, `onProgress` →
// `progress`, `onPrompt` → a `text` question, `onManualCodeInput` → `manual_code`, `onSelect` →
// `select`), each sent to pi-rs's login (`provider.oauth.notify` / `provider.oauth.prompt`);
// `provider.oauth.abort` aborts its `signal`. `refreshToken` and `getApiKey` answer
// `provider.oauth.refresh` / `provider.oauth.apiKey`; `modifyModels` answers
// `provider.oauth.modifyModels`, and the provider's `refreshModels` `provider.refreshModels`.
import { extensions } from "./loader.mjs";
import { rpc } from "./rpc.mjs";

const logins = new Map();

function oauthOf(params) {
	const oauth = extensions.get(params.extensionPath)?.providerOAuth?.get(params.provider);
	if (!oauth) throw new Error(`Provider ${params.provider} has no oauth in the JavaScript host`);
	return oauth;
}

export async function runOAuthLogin(params) {
	const oauth = oauthOf(params);
	const loginId = params.loginId;
	const controller = new AbortController();
	logins.set(loginId, controller);
	const notify = (event) => rpc.call("provider.oauth.notify", { loginId, event });
	const prompt = (question) => rpc.call("provider.oauth.prompt", { loginId, prompt: question });
	try {
		return await oauth.login({
			onAuth: (info) => void notify({ type: "auth_url", ...info }),
			onDeviceCode: (info) => void notify({ type: "device_code", ...info }),
			onPrompt: (question) => prompt({ type: "text", ...question }),
			onProgress: (message) => void notify({ type: "progress", message }),
			onManualCodeInput: () => prompt({ type: "manual_code", message: "Paste the authorization code" }),
			onSelect: (question) => prompt({ type: "select", ...question }),
			signal: controller.signal,
		});
	} finally {
		logins.delete(loginId);
	}
}

export function abortOAuthLogin(loginId) {
	logins.get(loginId)?.abort();
}

export async function runOAuthRefresh(params) {
	return await oauthOf(params).refreshToken(params.credential, new AbortController().signal);
}

export async function runOAuthApiKey(params) {
	return await oauthOf(params).getApiKey(params.credential);
}

export async function runOAuthModifyModels(params) {
	const models = await oauthOf(params).modifyModels(params.models, params.credential);
	if (!Array.isArray(models)) throw new Error(`Provider ${params.provider}: oauth.modifyModels returned no models`);
	return models;
}

// pi's legacy `ProviderConfig.refreshModels(context)`: the models it returns replace the
// registration's (`null` when it returns none).
export async function runRefreshModels(params) {
	const refresh = extensions.get(params.extensionPath)?.providerRefresh?.get(params.provider);
	if (!refresh) throw new Error(`Provider ${params.provider} has no refreshModels in the JavaScript host`);
	const context = {
		credential: params.credential ?? undefined,
		stored: undefined,
		allowNetwork: true,
		signal: new AbortController().signal,
		publish: async (publication) => {
			publication?.update?.();
			return true;
		},
	};
	const models = await refresh(context);
	return Array.isArray(models) ? models : null;
}
