// A provider's JavaScript `streamSimple` run for pi-rs (`provider.stream`): each event of the
// stream it returns goes back as a `provider.event` notification (with the partial's block at
// `contentIndex`), in order and before the answer; `provider.abort` aborts its `signal`. Its
// options are pi's (see `requestOptions`).
import { extensions } from "./loader.mjs";
import { rpc } from "./rpc.mjs";

const controllers = new Map();

/** The event as pi-rs reads it. Producers mutate one partial message, so it is read as of the
 * event: a start carries no content yet, a block starts empty and ends with the event's text. */
function wire(event) {
	const { partial, ...rest } = event;
	if (event.type === "start") return { ...rest, partial: { ...partial, content: [] } };
	const block = partial?.content?.[event.contentIndex];
	switch (event.type) {
		case "text_start":
			return { ...rest, block: { ...block, text: "" } };
		case "thinking_start":
			return { ...rest, block: { ...block, thinking: "" } };
		case "toolcall_start":
			return { ...rest, block: { ...block, arguments: {} } };
		case "text_end":
			return { ...rest, block: { ...block, text: event.content ?? block?.text ?? "" } };
		case "thinking_end":
			return { ...rest, block: { ...block, thinking: event.content ?? block?.thinking ?? "" } };
		default:
			return rest;
	}
}

/** pi's request options: the values pi-rs sent, the abort `signal`, and the callbacks pi passes
 * (`onPayload` returns the payload to send, `before_provider_request`'s; `onResponse` and
 * `onProviderStreamEvent` report to `after_provider_response` / `provider_stream_event`). Each
 * answers at once when pi-rs said nobody listens (`wants`). */
function requestOptions(streamId, sent, signal) {
	const { wants = {}, ...options } = sent ?? {};
	return {
		...options,
		signal,
		onPayload: async (payload) => (wants.payload ? await rpc.call("provider.payload", { streamId, payload }) : payload),
		onResponse: async (response) => {
			if (!wants.response) return;
			const headers = response?.headers instanceof Headers ? Object.fromEntries(response.headers.entries()) : (response?.headers ?? {});
			await rpc.call("provider.response", { streamId, status: response?.status, headers });
		},
		onProviderStreamEvent: async (data) => {
			if (wants.streamEvents) await rpc.call("provider.streamEvent", { streamId, data });
		},
	};
}

export async function runProviderStream(params) {
	const ext = extensions.get(params.extensionPath);
	const entry = ext?.providerStreams?.get(params.provider);
	if (!entry) throw new Error(`Provider ${params.provider} has no streamSimple in the JavaScript host`);
	// pi's `stream` (modelRegistry.stream) of a native provider is its own; otherwise `streamSimple`.
	const streamSimple = params.simple === false && entry.stream ? entry.stream : entry.streamSimple;
	const controller = new AbortController();
	controllers.set(params.streamId, controller);
	try {
		const options = requestOptions(params.streamId, params.options, controller.signal);
		const stream = await streamSimple(params.model, params.context, options);
		for await (const event of stream) {
			rpc.send({ method: "provider.event", params: { streamId: params.streamId, event: wire(event) } });
		}
		return null;
	} finally {
		controllers.delete(params.streamId);
	}
}

export function abortProviderStream(streamId) {
	controllers.get(streamId)?.abort();
}
