// A minimal typed-callback registry: on(type, fn) returns a function that unsubscribes.

export class Emitter {
  constructor() {
    this._listeners = new Map();
  }

  /** Call `fn(detail)` for every `type` event; returns the function that stops it. */
  on(type, fn) {
    if (typeof fn !== "function") throw new TypeError("a listener must be a function");
    let set = this._listeners.get(type);
    if (!set) this._listeners.set(type, (set = new Set()));
    set.add(fn);
    return () => this.off(type, fn);
  }

  /** Like `on`, for the next `type` event only. */
  once(type, fn) {
    const off = this.on(type, (detail) => {
      off();
      fn(detail);
    });
    return off;
  }

  /** Stop calling `fn` for `type`. */
  off(type, fn) {
    this._listeners.get(type)?.delete(fn);
  }

  /** Call every listener of `type`. A listener that throws does not stop the others or
   * the client: its error is re-thrown on its own (as an EventTarget reports it). */
  emit(type, detail) {
    const set = this._listeners.get(type);
    if (!set || set.size === 0) return;
    for (const fn of [...set]) {
      try {
        fn(detail);
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }
}
