// pi.events: the session's channel bus. The extensions of this host share it with the session's
// Rust extensions: an emit here reaches pi-rs (`events.emit`), and pi-rs sends what Rust
// extensions emit (`events.emit` to the host), which only this host's listeners hear.
import { rpc } from "./rpc.mjs";

class EventBus {
	constructor() {
		this.listeners = new Map();
	}

	/** pi's `emit`: every listener of `channel`, here and in pi-rs. */
	emit(channel, data) {
		this.emitLocal(channel, data);
		rpc.send({ method: "events.emit", params: { channel, data: data === undefined ? null : data } });
	}

	/** The listeners of this host only (an emit of a Rust extension). */
	emitLocal(channel, data) {
		for (const listener of [...(this.listeners.get(channel) ?? [])]) listener(data);
	}

	on(channel, listener) {
		const list = this.listeners.get(channel) ?? [];
		list.push(listener);
		this.listeners.set(channel, list);
		return () => {
			const current = this.listeners.get(channel) ?? [];
			const index = current.indexOf(listener);
			if (index !== -1) current.splice(index, 1);
		};
	}
}

export const bus = new EventBus();
