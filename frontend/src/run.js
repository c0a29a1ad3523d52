/**
 * One submission being shown: its events (each once, in seq order), their
 * effects on the page, and the reconnecting socket that streams them until
 * `done` or `error` (and a while after it: an event numbered before `done` may
 * be told after it); then the stored result (program output, where a runtime
 * error happened), fetched once, since events do not carry it.
 */

import { memoryDiagnostics } from "./diagnostics.js";
import { EventStore, finalVerdict, isFinished, parseJsonLenient } from "./events.js";
import { figureTitle, logText, verdictLabel } from "./format.js";
import { ReconnectingSocket, withAfter } from "./socket.js";

/** The socket URL for a submission: same host, ws or wss to match the page. */
export function socketUrl(wsBase, id, loc = window.location) {
  const scheme = loc.protocol === "https:" ? "wss" : "ws";
  return `${scheme}://${loc.host}${wsBase}${id}/`;
}

/** How long the socket stays open after `done` for an event numbered before it (the CPU tier's SASS). */
export const LATE_EVENTS_MS = 10000;

export class Run {
  /**
   * @param {object} deps  id (in URLs), number (on the page), view (ResultsView), editor (Editor), figures (Figures),
   *   wsBase, onFinish(run, verdict), fetchDetail(id) -> {ok, body} for the stored result
   */
  constructor({ id, number, view, editor, figures, wsBase, onFinish, fetchDetail, profile, setTimer }) {
    this.fetchDetail = fetchDetail || null;
    this.setTimer = setTimer || ((fn, ms) => setTimeout(fn, ms));
    this.profile = profile || null; // a ProfilePanel: the Nsight Compute report of an accepted GPU run
    this.resultApplied = false;
    this.sources = { compile: [], memory: [], runtime: [] };
    this.id = id;
    this.number = number ?? id;
    this.view = view;
    this.editor = editor;
    this.figures = figures;
    this.wsBase = wsBase;
    this.onFinish = onFinish || (() => {});
    this.store = new EventStore();
    this.finished = false;
    this.socket = null;
    this.shownCompile = false;
    this.figureCount = 0;
  }

  /** Opens the socket; the server's snapshot comes first, then live events. */
  follow() {
    const base = socketUrl(this.wsBase, this.id);
    this.socket = new ReconnectingSocket((attempt) => (attempt === 0 ? base : withAfter(base, this.store.lastSeq())), {
      onMessage: (text) => this.onMessage(text),
      onStatus: (state, info) => this.onSocketStatus(state, info),
      onGiveUp: (code, reason) => {
        if (this.finished) return;
        this.view.setStatus(`The live view of submission #${this.number} was refused${reason ? `: ${reason}` : ""} (code ${code}).`, "error");
        this.finish("error", reason, { refused: true });
      },
    });
    this.socket.start();
  }

  onSocketStatus(state, info) {
    if (this.finished) return;
    if (state === "reconnecting" && info.failures > 1) {
      const seconds = Math.max(1, Math.round(info.delay / 1000));
      this.view.setStatus(`Connection lost; reconnecting in ${seconds} s…`, "busy");
    } else if (state === "open") {
      this.view.setStatus(`Following submission #${this.number}…`, "busy");
    }
  }

  onMessage(text) {
    let msg;
    try {
      msg = parseJsonLenient(text);
    } catch (_err) {
      return; // Not ours to interpret; the next message will do.
    }
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "snapshot" && msg.submission) this.showSubmission(msg.submission);
    else if (msg.type === "event" && msg.event) this.ingest([msg.event]);
  }

  /** A snapshot or a fetched detail: its events, and its result if it is finished. */
  showSubmission(submission) {
    this.ingest(submission.events || []);
    if (this.finished) return;
    if (isFinished(submission)) {
      const result = submission.result || {};
      this.applyResult(result);
      this.finish(finalVerdict(submission), result.message || "");
    } else if (this.finished && !this.resultApplied && submission.result) {
      this.applyResult(submission.result);
    }
  }

  ingest(events) {
    const fresh = this.store.add(events);
    if (!fresh.length) return;
    this.view.addEvents(fresh);
    for (const ev of fresh) this.apply(ev);
  }

  apply(ev) {
    switch (ev.type) {
      case "queued":
        // A queue no live worker serves says so (labs.fleet.queue_notice): the learner knows why it waits.
        if (!this.finished) {
          const why = ev.message ? ` ${ev.message}` : "";
          this.view.setStatus(`Submission #${this.number} is queued…${why}`, "busy");
        }
        break;
      case "started":
        if (!this.finished) {
          const where = [ev.backend && `${ev.backend} backend`, ev.device].filter(Boolean).join(", ");
          this.view.setStatus(`Running${where ? ` (${where})` : ""}…`, "busy");
        }
        break;
      case "compiled":
        this.shownCompile = true;
        this.view.showCompileInfo(ev);
        // Warnings from a successful compile are marked like errors, with their own severity.
        if (Array.isArray(ev.diagnostics) && ev.diagnostics.length) this.showDiagnostics("compile", ev.diagnostics);
        break;
      case "compile_error":
        this.showDiagnostics("compile", ev.diagnostics || []);
        break;
      case "memory":
        this.showDiagnostics("memory", memoryDiagnostics(ev));
        break;
      case "figure":
        this.showFigure(ev);
        break;
      case "log":
        this.view.appendOutput(logText(ev));
        break;
      case "done":
        this.view.showGoals(ev.goals);
        this.finish(ev.verdict || "error", ev.message || "");
        this.loadResult();
        break;
      case "error":
        this.finish(ev.verdict || "error", ev.message || "");
        this.loadResult();
        break;
      default:
        break;
    }
  }

  /** Diagnostics by where they came from (compile, memory, runtime); the editor shows them all. */
  showDiagnostics(source, diagnostics) {
    this.sources[source] = diagnostics;
    const all = [].concat(this.sources.compile, this.sources.runtime, this.sources.memory);
    this.view.showDiagnostics(all);
    this.editor.showDiagnostics(all);
  }

  /** After a live `done`: the stored result, for what events do not carry (output, runtime error lines). */
  async loadResult() {
    if (this.resultApplied || !this.fetchDetail) return;
    const reply = await this.fetchDetail(this.id);
    if (!reply || !reply.ok || this.resultApplied || this.discarded) return;
    this.ingest(reply.body.events || []);
    if (reply.body.result) this.applyResult(reply.body.result);
  }

  showFigure(entry) {
    this.figureCount += 1;
    this.figures.show(figureTitle(entry, `Figure ${this.figureCount}`), entry);
  }

  /** Fills from the stored result what the events did not already show. */
  applyResult(result) {
    this.resultApplied = true;
    const compile = result.compile;
    if (compile && !this.shownCompile && (compile.registers !== undefined && compile.registers !== null)) {
      this.shownCompile = true;
      this.view.showCompileInfo(compile);
    }
    // Compile diagnostics, and where a runtime error happened (result.diagnostics).
    if (compile && compile.diagnostics && compile.diagnostics.length && !this.sources.compile.length) {
      this.showDiagnostics("compile", compile.diagnostics);
    }
    if (Array.isArray(result.diagnostics) && result.diagnostics.length) this.showDiagnostics("runtime", result.diagnostics);
    if (result.memory && !this.sources.memory.length) this.showDiagnostics("memory", memoryDiagnostics(result.memory));
    const drawn = new Set(this.store.all().filter((ev) => ev.type === "figure").map((ev) => figureTitle(ev)));
    (result.figures || []).forEach((fig, i) => {
      const title = figureTitle(fig, `Figure ${i + 1}`);
      if (!drawn.has(title)) this.figures.show(title, fig);
    });
    if (this.profile) this.profile.show(this.id, result);
    if (typeof result.output === "string" && result.output) {
      this.view.setOutput(result.output + (result.output_truncated ? "\n… (output truncated)" : ""));
    }
  }

  finish(verdict, message, { refused = false } = {}) {
    if (this.finished) return;
    this.finished = true;
    this.view.showVerdict(verdict, message);
    if (!refused) {
      const label = verdictLabel(verdict);
      const text = message ? `Finished: ${label}. ${message}` : `Finished: ${label}.`;
      this.view.setStatus(text, "done");
    }
    // The CPU tier tells a new source's SASS listing after `done`, numbered before it: listen a while longer.
    if (refused) this.stop();
    else this.setTimer(() => this.stop(), LATE_EVENTS_MS);
    this.onFinish(this, verdict);
  }

  /** Stops listening (the submission itself keeps running on the server). */
  /** This run is no longer shown: a result fetched later is dropped. */
  discard() {
    this.discarded = true;
    this.stop();
  }

  stop() {
    if (this.socket) {
      this.socket.close();
      this.socket = null;
    }
  }
}
