/**
 * A small reconnecting WebSocket: exponential backoff with jitter, and a URL
 * chosen per attempt so a reconnect can ask for the events after the last seq
 * it saw. Dedupe is the caller's job (the server replays its stored state).
 *
 * The WebSocket class and the timer functions are injectable so the logic is
 * testable in node without a browser.
 */

/** Delay in ms before reconnect attempt `attempt` (0-based), jitter in [0.5, 1) of the cap. */
export function backoffDelay(attempt, { baseDelay = 500, maxDelay = 15000, factor = 2, random = Math.random } = {}) {
  const capped = Math.min(maxDelay, baseDelay * factor ** attempt);
  return Math.round(capped * (0.5 + random() / 2));
}

/** Adds `after=<seq>` to a URL (kept relative-safe: plain string work). */
export function withAfter(url, lastSeq) {
  if (lastSeq === null || lastSeq === undefined) return url;
  const sep = url.includes("?") ? "&" : "?";
  return `${url}${sep}after=${encodeURIComponent(lastSeq)}`;
}

export class ReconnectingSocket {
  /**
   * @param {(attempt: number) => string} urlFor  the URL for connection attempt N (0 = first)
   * @param {object} options  onMessage(text), onStatus(state, info), onGiveUp(code, reason),
   *   WebSocketImpl, setTimer, clearTimer, baseDelay, maxDelay, factor, random
   */
  constructor(urlFor, options = {}) {
    this.urlFor = urlFor;
    this.options = options;
    this.WebSocketImpl = options.WebSocketImpl || globalThis.WebSocket;
    this.setTimer = options.setTimer || ((fn, ms) => setTimeout(fn, ms));
    this.clearTimer = options.clearTimer || ((id) => clearTimeout(id));
    this.ws = null;
    this.timer = null;
    this.stopped = false;
    this.connections = 0; // successful or not, how many sockets were opened
    this.failures = 0; // consecutive closes without a message in between
  }

  start() {
    this.stopped = false;
    this.connect();
    return this;
  }

  connect() {
    if (this.stopped) return;
    const url = this.urlFor(this.connections);
    this.connections += 1;
    this.status("connecting", { url, attempt: this.connections });
    let ws;
    try {
      ws = new this.WebSocketImpl(url);
    } catch (err) {
      this.scheduleReconnect({ code: 0, reason: String(err) });
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws === ws) this.status("open", { url });
    };
    ws.onmessage = (msg) => {
      if (this.ws !== ws || this.stopped) return;
      this.failures = 0;
      if (this.options.onMessage) this.options.onMessage(msg.data);
    };
    ws.onerror = () => {
      // A close always follows an error; reconnection is decided there.
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.stopped) return;
      const code = ev ? ev.code : 0;
      const reason = ev ? ev.reason : "";
      // 4000-4999: the application refused us (not allowed, no such submission):
      // retrying will not help.
      if (code >= 4000 && code < 5000) {
        this.stopped = true;
        this.status("closed", { code, reason });
        if (this.options.onGiveUp) this.options.onGiveUp(code, reason);
        return;
      }
      this.scheduleReconnect({ code, reason });
    };
  }

  scheduleReconnect(info) {
    if (this.stopped) return;
    const delay = backoffDelay(this.failures, this.options);
    this.failures += 1;
    this.status("reconnecting", { ...info, delay, failures: this.failures });
    this.timer = this.setTimer(() => {
      this.timer = null;
      this.connect();
    }, delay);
  }

  /** Stops for good: no more reconnects, the open socket (if any) closed normally. */
  close() {
    this.stopped = true;
    if (this.timer !== null) {
      this.clearTimer(this.timer);
      this.timer = null;
    }
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      try {
        ws.close(1000, "done");
      } catch (_err) {
        // Closing a socket that never opened may throw in some browsers; nothing to do.
      }
    }
    this.status("closed", { code: 1000 });
  }

  status(state, info) {
    if (this.options.onStatus) this.options.onStatus(state, info);
  }
}
