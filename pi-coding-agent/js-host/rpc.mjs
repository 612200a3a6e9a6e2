// JSON-RPC lines on the real stdout. Everything an extension prints (its stdout and stderr
// writes, console.*) travels as a `host.output` notification, so a stray console.log can never
// corrupt the protocol and pi-rs shows it in order with the rest (pi's stdout takeover sends it to
// stderr outside the interactive mode). Node's own messages (a crash's trace) stay on stderr.
const writeOut = process.stdout.write.bind(process.stdout);
function printed(chunk, encoding, callback) {
	const done = typeof encoding === "function" ? encoding : callback;
	const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString(typeof encoding === "string" ? encoding : "utf8");
	if (text.length > 0) writeOut(`${JSON.stringify({ jsonrpc: "2.0", method: "host.output", params: { text } })}\n`);
	if (typeof done === "function") process.nextTick(done);
	return true;
}
process.stdout.write = printed;
process.stderr.write = printed;
for (const name of ["log", "info", "debug", "dir", "table"]) {
	const original = console.error.bind(console);
	console[name] = (...args) => original(...args);
}

function errorMessage(error) {
	if (error instanceof Error) return error.message;
	return String(error);
}

class Rpc {
	constructor() {
		this.nextId = 1;
		this.pending = new Map();
		this.inflight = new Set();
		this.methods = {};
		this.state = {};
		/** Methods answered at once, without waiting for the calls in flight (pi-rs's UI thread
		 * waits for them). */
		this.immediate = new Set();
	}

	send(message) {
		writeOut(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
	}

	serve(methods) {
		this.methods = methods;
	}

	updateState(patch) {
		Object.assign(this.state, patch);
	}

	/** A request to pi-rs; resolves with the result, rejects with the error message. */
	call(method, params) {
		const id = `h${this.nextId++}`;
		const promise = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
		this.send({ id, method, params });
		return promise;
	}

	/** A request whose answer nobody awaits: the reply to the current request waits for it, and a
	 * failure is reported as the extension's error. */
	fire(method, params, extensionPath) {
		const promise = this.call(method, params).catch((error) => {
			this.send({
				method: "pi.reportError",
				params: { extensionPath, event: method, error: errorMessage(error) },
			});
		});
		this.inflight.add(promise);
		promise.finally(() => this.inflight.delete(promise));
		return promise;
	}

	/** Like `fire`, for calls whose failure pi answers to the extension instead of reporting it
	 * (`ui.setTheme` without a UI). */
	quiet(method, params) {
		const promise = this.call(method, params).then(
			() => undefined,
			() => undefined,
		);
		this.inflight.add(promise);
		promise.finally(() => this.inflight.delete(promise));
		return promise;
	}

	async settle() {
		while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
	}

	receive(line) {
		if (line.trim().length === 0) return;
		let message;
		try {
			message = JSON.parse(line);
		} catch {
			return;
		}
		if (typeof message.method === "string") {
			this.handle(message);
			return;
		}
		const waiter = this.pending.get(message.id);
		if (!waiter) return;
		this.pending.delete(message.id);
		if (message.error) waiter.reject(new Error(message.error.message ?? "error"));
		else waiter.resolve(message.result ?? null);
	}

	async handle(message) {
		const method = this.methods[message.method];
		const hasId = message.id !== undefined && message.id !== null;
		if (!method) {
			if (hasId) this.send({ id: message.id, error: { code: -32601, message: `Unknown method: ${message.method}` } });
			return;
		}
		try {
			const result = await method(message.params ?? {});
			if (!this.immediate.has(message.method)) await this.settle();
			if (hasId) this.send({ id: message.id, result: result === undefined ? null : result });
		} catch (error) {
			if (!this.immediate.has(message.method)) await this.settle();
			const data = error instanceof Error && error.stack ? { stack: error.stack } : undefined;
			if (hasId) this.send({ id: message.id, error: { code: -32000, message: errorMessage(error), data } });
			else {
				const params = message.params ?? {};
				this.send({
					method: "pi.reportError",
					params: { extensionPath: params.extensionPath, event: params.event ?? message.method, error: errorMessage(error) },
				});
			}
		}
	}
}

export const rpc = new Rpc();
export { errorMessage };
