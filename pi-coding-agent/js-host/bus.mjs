// pi.events: the channel bus the extensions of one host share.
class EventBus {
	constructor() {
		this.listeners = new Map();
	}

	emit(channel, data) {
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
