/**
 * Entry point of the exercise page: reads #exercise-data, builds the editor,
 * wires language switching, submission, the live run view and the history.
 * On pages without #exercise-data (the module list) it does nothing.
 */

import "./app.css";

import { Api } from "./api.js";
import { Drafts } from "./drafts.js";
import { Editor } from "./editor.js";
import { isFinished } from "./events.js";
import { Figures } from "./plots.js";
import { ResultsView } from "./render.js";
import { Run } from "./run.js";

function readConfig() {
  const node = document.getElementById("exercise-data");
  if (!node) return null;
  try {
    return JSON.parse(node.textContent);
  } catch (err) {
    console.error("warplab: #exercise-data is not valid JSON", err);
    return null;
  }
}

function debounce(fn, ms) {
  let timer = null;
  const run = () => {
    timer = null;
    fn();
  };
  const debounced = () => {
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(run, ms);
  };
  debounced.flush = () => {
    if (timer !== null) {
      clearTimeout(timer);
      run();
    }
  };
  return debounced;
}

class ExercisePage {
  constructor(config) {
    this.config = config;
    this.slug = config.slug;
    this.languages = config.languages && config.languages.length ? config.languages : ["numba"];
    this.starters = config.starters || {};
    this.api = new Api(config);
    this.drafts = new Drafts(this.slug);
    this.view = new ResultsView();
    this.figures = new Figures(document.getElementById("figures"), config.plotly_url);
    this.select = document.getElementById("language");
    this.button = document.getElementById("submit");
    this.run = null;

    const candidates = [config.initial_language, this.select && this.select.value, this.languages[0]];
    this.language = candidates.find((l) => this.languages.includes(l));
    if (this.select) this.select.value = this.language;

    this.saveDraft = debounce(() => this.drafts.save(this.language, this.editor.getSource()), 300);
    this.editor = new Editor(document.getElementById("editor"), {
      doc: this.sourceFor(this.language),
      language: this.language,
      onChange: () => this.saveDraft(),
    });

    this.select?.addEventListener("change", () => this.switchLanguage(this.select.value));
    this.button?.addEventListener("click", (ev) => {
      ev.preventDefault();
      this.submit();
    });
    this.view.history?.addEventListener("click", (ev) => {
      const li = ev.target.closest("li[data-id]");
      if (li && this.view.history.contains(li)) this.openSubmission(li.dataset.id);
    });
    window.addEventListener("pagehide", () => this.saveDraft.flush());

    this.refreshHistory();
  }

  /** The draft for a language, or its starter the first time. */
  sourceFor(language) {
    const draft = this.drafts.load(language);
    return draft !== null ? draft : this.starters[language] || "";
  }

  switchLanguage(language, source) {
    if (!this.languages.includes(language)) return;
    this.saveDraft.flush();
    if (language !== this.language) this.drafts.save(this.language, this.editor.getSource());
    this.language = language;
    if (this.select && this.select.value !== language) this.select.value = language;
    this.editor.setLanguage(language, source !== undefined ? source : this.sourceFor(language));
    if (source !== undefined) this.drafts.save(language, source);
  }

  setBusy(busy) {
    if (this.button) {
      this.button.disabled = busy;
      this.button.setAttribute("aria-busy", busy ? "true" : "false");
    }
  }

  /** Drops the run being shown (its socket closed) and empties the result panes. */
  resetRun() {
    if (this.run) this.run.stop();
    this.run = null;
    this.view.reset();
    this.figures.clear();
    this.editor.clearDiagnostics();
  }

  async submit() {
    if (this.run && !this.run.finished) return;
    this.saveDraft.flush();
    const source = this.editor.getSource();
    this.setBusy(true);
    this.resetRun();
    this.view.setStatus("Submitting…", "busy");
    const reply = await this.api.submit({ exercise: this.slug, language: this.language, source });
    if (!reply.ok) {
      this.view.setStatus(reply.error, "error");
      this.setBusy(false);
      return;
    }
    const sub = reply.body;
    this.view.setStatus(`Submission #${sub.id} sent; waiting for the worker…`, "busy");
    // The socket's snapshot says where the run is, even if it already finished.
    this.startRun(sub.id, null);
    this.refreshHistory();
  }

  startRun(id, submission) {
    const run = new Run({
      id,
      view: this.view,
      editor: this.editor,
      figures: this.figures,
      wsBase: this.config.ws_base,
      onFinish: () => {
        if (this.run !== run) return;
        this.setBusy(false);
        this.refreshHistory();
      },
    });
    this.run = run;
    this.view.markCurrent(id);
    if (submission && (submission.events || isFinished(submission))) run.showSubmission(submission);
    if (!run.finished) {
      this.setBusy(true);
      run.follow();
    }
    return run;
  }

  /** Loads a past submission: its source into the editor, its result and events beside it. */
  async openSubmission(id) {
    const reply = await this.api.submission(id);
    if (!reply.ok) {
      this.view.setStatus(reply.error, "error");
      return;
    }
    const sub = reply.body;
    this.resetRun();
    this.setBusy(false);
    if (typeof sub.source === "string") {
      const language = this.languages.includes(sub.language) ? sub.language : this.language;
      this.switchLanguage(language, sub.source);
    }
    this.view.setStatus(`Showing submission #${sub.id}.`, "info");
    this.startRun(sub.id, sub);
  }

  async refreshHistory() {
    if (!this.config.submissions_url || !this.view.history) return;
    const reply = await this.api.history();
    if (!reply.ok) return; // The list is a convenience; the run view has the facts.
    const items = Array.isArray(reply.body.submissions) ? reply.body.submissions : [];
    this.view.showHistory(items, this.run ? this.run.id : null);
  }
}

function start() {
  const config = readConfig();
  if (!config || !document.getElementById("editor")) return;
  const page = new ExercisePage(config);
  window.warplab = {
    getSource: () => page.editor.getSource(),
    setSource: (text) => page.editor.setSource(text),
    get editorView() {
      return page.editor.view;
    },
    get language() {
      return page.language;
    },
    page,
  };
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
else start();
