// pi-tui 1.6.0's mouse dispatch for extension components: `dispatchMouseEvent` (a component's
// `handleMouse` answer with the target's rectangle), `retargetMouseEvent`, `MouseRegion` (mouse
// handling around a component) and the dispatch to the child of a vertical list of children
// that `Container.handleMouse` uses. pi-rs hands a drawn component its events
// (`component.mouse`, see ../../components.mjs).

/** Give `event` to `component`; undefined when it did not use it. */
export function dispatchMouseEvent(component, event) {
	const result = component.handleMouse?.(event);
	if (!result) return undefined;
	if ("target" in result) {
		const forwarded = result;
		return forwarded.focus && component.handleInput ? { ...forwarded, focusTarget: component } : forwarded;
	}
	if (!result.handled && !result.capture && !result.focus) return undefined;
	return {
		...result,
		handled: true,
		...(result.focus ? { focusTarget: component } : {}),
		target: {
			component,
			originX: event.screenX - event.x,
			originY: event.screenY - event.y,
			width: event.width,
			height: event.height,
		},
	};
}

/** Recreate local coordinates for a previously dispatched mouse target. */
export function retargetMouseEvent(event, target) {
	return {
		...event,
		x: event.screenX - target.originX,
		y: event.screenY - target.originY,
		width: target.width,
		height: target.height,
	};
}

/** The child of `children` drawn at the event's row (each child's lines rendered at the width). */
export function dispatchMouseToChildren(children, event) {
	if (event.y < 0 || event.y >= event.height) return undefined;
	let childY = 0;
	for (const child of children) {
		const childHeight = child.render(event.width).length;
		if (event.y >= childY && event.y < childY + childHeight) {
			return dispatchMouseEvent(child, { ...event, y: event.y - childY, height: childHeight });
		}
		childY += childHeight;
	}
	return undefined;
}

/** Adds mouse handling to an existing component without changing its rendering. */
export class MouseRegion {
	constructor(child, onMouse) {
		this.child = child;
		this.onMouse = onMouse;
	}
	render(width) {
		return this.child.render(width);
	}
	handleMouse(event) {
		const childResult = dispatchMouseEvent(this.child, event);
		return childResult ?? this.onMouse(event);
	}
	invalidate() {
		this.child.invalidate?.();
	}
}
