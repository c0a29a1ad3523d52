/**
 * One submission being shown: its events (each once, in seq order), their
 * effects on the page, and the reconnecting socket that streams them until
 * `done` or `error`.
 */

import { EventStore, finalVerdict, isFinished, parseJsonLenient } from "./events.js";
import { figureTitle, logText } from "./format.js";
import { ReconnectingSocket, withAfter } from "./socket.js";

/** The socket URL for a submission: same host, ws or wss to match the page. */
export function socketUrl(wsBase, id, loc = window.location) {
  const scheme = loc.protocol === "https:" ? "wss" : "ws";
  return `${scheme}://${loc.host}${wsBase}${id}/`;
}

export class Run {
  /**
   * @param {object} deps  id, view (ResultsView), editor (Editor), figures (Figures),
   *   wsBase, onFinish(run, verdict)
   */
  constructor({ id, view, editor, figures, wsBase, onFinish }) {
    this.id = id;
    this.view = view;
    this.editor = editor;
    this.figures = figures;
    this.wsBase = wsBase;
    this.onFinish = onFinish || (() => {});
    this.store = new EventStore();
    this.finished = false;
    this.socket = null;
    this.diagnostics = [];
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
        this.view.setStatus(`The live view of submission #${this.id} was refused${reason ? `: ${reason}` : ""} (code ${code}).`, "error");
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
      this.view.setStatus(`Following submission #${this.id}…`, "busy");
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
          this.view.setStatus(`Submission #${this.id} is queued…${why}`, "busy");
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
        if (Array.isArray(ev.diagnostics) && ev.diagnostics.length) this.showDiagnostics(ev.diagnostics);
        break;
      case "compile_error":
        this.showDiagnostics(ev.diagnostics || []);
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
        break;
      case "error":
        this.finish(ev.verdict || "error", ev.message || "");
        break;
      default:
        break;
    }
  }

  showDiagnostics(diagnostics) {
    this.diagnostics = diagnostics;
    this.view.showDiagnostics(diagnostics);
    this.editor.showDiagnostics(diagnostics);
  }

  showFigure(entry) {
    this.figureCount += 1;
    this.figures.show(figureTitle(entry, `Figure ${this.figureCount}`), entry);
  }

  /** Fills from the stored result what the events did not already show. */
  applyResult(result) {
    const compile = result.compile;
    if (compile && !this.shownCompile && (compile.registers !== undefined && compile.registers !== null)) {
      this.shownCompile = true;
      this.view.showCompileInfo(compile);
    }
    // Compile diagnostics, or where a runtime error happened (result.diagnostics).
    const diagnostics = [].concat((compile && compile.diagnostics) || [], result.diagnostics || []);
    if (diagnostics.length && !this.diagnostics.length) this.showDiagnostics(diagnostics);
    const drawn = new Set(this.store.all().filter((ev) => ev.type === "figure").map((ev) => figureTitle(ev)));
    (result.figures || []).forEach((fig, i) => {
      const title = figureTitle(fig, `Figure ${i + 1}`);
      if (!drawn.has(title)) this.figures.show(title, fig);
    });
    if (typeof result.output === "string" && result.output) {
      this.view.setOutput(result.output + (result.output_truncated ? "\n… (output truncated)" : ""));
    }
  }

  finish(verdict, message, { refused = false } = {}) {
    if (this.finished) return;
    this.finished = true;
    this.view.showVerdict(verdict, message);
    if (!refused) {
      const text = message ? `Finished: ${verdict.replace(/_/g, " ")}. ${message}` : `Finished: ${verdict.replace(/_/g, " ")}.`;
      this.view.setStatus(text, "done");
    }
    this.stop();
    this.onFinish(this, verdict);
  }

  /** Stops listening (the submission itself keeps running on the server). */
  stop() {
    if (this.socket) {
      this.socket.close();
      this.socket = null;
    }
  }
}
