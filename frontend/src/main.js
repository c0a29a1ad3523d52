/**
 * Entry point of the exercise page: reads #exercise-data, builds the editor,
 * wires language switching, submission (button or Ctrl/Cmd+Enter), the live
 * run view and the history. A past submission opens read-only beside the
 * draft; restoring it or resetting to the starter first keeps the draft aside.
 * Drafts are saved in this browser at once and on the server a second after typing stops; on load the
 * editor opens on the newer copy, and the other is kept aside too.
 * On load the last run's verdict and figures are shown.
 * On pages without #exercise-data (the module list) it does nothing.
 */

import "./app.css";

import { Api } from "./api.js";
import { chooseDraft, Drafts, KeptDrafts } from "./drafts.js";
import { Editor } from "./editor.js";
import { isFinished } from "./events.js";
import { Figures } from "./plots.js";
import { ProfilePanel } from "./profile.js";
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

const SEND_AFTER_MS = 1000; // a draft goes to the server once typing has paused this long

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
    this.profilePanel = new ProfilePanel(document.getElementById("profile-action"), this.api);
    this.drafts = new Drafts(this.slug);
    this.kept = new KeptDrafts(this.slug);
    this.past = null; // {language, source, label} shown read-only beside the draft
    this.view = new ResultsView();
    this.figures = new Figures(document.getElementById("figures"), config.plotly_url);
    this.select = document.getElementById("language");
    this.button = document.getElementById("submit");
    this.run = null;

    const candidates = [config.initial_language, this.select && this.select.value, this.languages[0]];
    this.language = candidates.find((l) => this.languages.includes(l));
    if (this.select) this.select.value = this.language;

    this.draftStatus = document.getElementById("draft-status");
    const toSend = this.reconcileDrafts(config.drafts || {});
    this.saveDraft = debounce(() => this.drafts.save(this.language, this.editor.getSource()), 300);
    this.sendDraft = debounce(() => this.pushDraft(this.language, this.editor.getSource()), SEND_AFTER_MS);
    this.editor = new Editor(document.getElementById("editor"), {
      doc: this.sourceFor(this.language),
      language: this.language,
      onChange: () => {
        this.saveDraft();
        this.sendDraft();
      },
      onSubmit: () => this.submit(),
    });
    this.pastBox = document.getElementById("past");
    this.pastEditor = null;
    document.getElementById("restore")?.addEventListener("click", () => this.restorePast());
    document.getElementById("close-past")?.addEventListener("click", () => this.closePast());
    document.getElementById("reset")?.addEventListener("click", () => this.resetToStarter());
    this.view.kept?.addEventListener("click", (ev) => {
      const li = ev.target.closest("li[data-kept]");
      const item = li && this.kept.list()[Number(li.dataset.kept)];
      if (item) this.showPast({ ...item, label: `Draft kept ${item.note ? `(${item.note})` : ""}`.trim() });
    });
    document.addEventListener("keydown", (ev) => {
      // Outside the editor too (the editor's own keymap handles it inside).
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && !ev.defaultPrevented) {
        ev.preventDefault();
        this.submit();
      }
    });
    this.languageNotes = config.language_notes || {};
    this.showLanguageNote();
    this.view.showKept(this.kept.list());

    this.select?.addEventListener("change", () => this.switchLanguage(this.select.value));
    this.button?.addEventListener("click", (ev) => {
      ev.preventDefault();
      this.submit();
    });
    this.view.history?.addEventListener("click", (ev) => {
      const li = ev.target.closest("li[data-id]");
      if (li && this.view.history.contains(li)) this.openSubmission(li.dataset.id);
    });
    window.addEventListener("pagehide", () => {
      this.saveDraft.flush();
      this.sendDraft.flush();
    });
    for (const language of toSend) this.pushDraft(language, this.drafts.load(language));

    this.refreshHistory().then((items) => this.showLastRun(items));
  }

  /** After an accepted run: a link to the next exercise of the course, when there is one. */
  showNextStep(verdict) {
    const box = document.getElementById("next-step");
    const next = this.config.next_exercise;
    if (!box) return;
    box.replaceChildren();
    if (verdict !== "accepted" || !next) return;
    const link = document.createElement("a");
    link.href = next.url;
    link.textContent = next.title;
    box.append("Solved. Next exercise: ", link);
  }

  /** Says before submit when this language cannot run on any live worker (the server decides). */
  showLanguageNote() {
    const note = document.getElementById("language-note");
    if (!note) return;
    const text = this.languageNotes[this.language] || "";
    note.textContent = text;
    note.hidden = !text;
  }

  /**
   * This browser's drafts against the server's (`server`, by language, from the page): each language's
   * chosen copy stored here, the losing copy kept aside; the languages whose copy the server lacks.
   */
  reconcileDrafts(server) {
    const toSend = [];
    for (const language of this.languages) {
      const chosen = chooseDraft(this.drafts.record(language), server[language] || null, this.starters[language] || "");
      if (chosen.keep) this.kept.keep(language, chosen.keep.source, chosen.keep.note);
      if (chosen.savedAt) this.drafts.write(language, { source: chosen.source, savedAt: chosen.savedAt, dirty: false });
      if (chosen.push) toSend.push(language);
    }
    return toSend;
  }

  /** Sends a language's draft to the server unless it holds it already; says how it went under the editor. */
  async pushDraft(language, source) {
    const record = this.drafts.record(language);
    if (typeof source !== "string" || (record && !record.dirty && record.source === source)) return;
    this.drafts.save(language, source);
    const reply = await this.api.saveDraft({ exercise: this.slug, language, source });
    if (reply.ok) {
      this.drafts.synced(language, source, reply.body.saved_at);
      this.showDraftStatus("saved", `Draft saved on the server at ${new Date(reply.body.saved_at).toLocaleTimeString()}.`);
    } else {
      this.showDraftStatus("unsaved", `Draft kept in this browser only for now: ${reply.error}`);
    }
  }

  showDraftStatus(state, text) {
    if (!this.draftStatus) return;
    this.draftStatus.dataset.state = state;
    this.draftStatus.textContent = text;
  }

  /** The draft for a language, or its starter the first time. */
  sourceFor(language) {
    const draft = this.drafts.load(language);
    return draft !== null ? draft : this.starters[language] || "";
  }

  switchLanguage(language, source) {
    if (!this.languages.includes(language)) return;
    this.saveDraft.flush();
    this.sendDraft.flush();
    if (language !== this.language) this.drafts.save(this.language, this.editor.getSource());
    this.language = language;
    if (this.select && this.select.value !== language) this.select.value = language;
    this.editor.setLanguage(language, source !== undefined ? source : this.sourceFor(language));
    if (source !== undefined) {
      this.drafts.save(language, source);
      this.sendDraft();
    }
    this.showLanguageNote();
  }

  /** Sets the current draft aside (listed under "Drafts kept") before the editor is overwritten. */
  keepDraft(note) {
    const source = this.editor.getSource();
    if (!source.trim() || source === (this.starters[this.language] || "")) return;
    this.view.showKept(this.kept.keep(this.language, source, note));
  }

  resetToStarter() {
    this.keepDraft("before reset");
    this.editor.setSource(this.starters[this.language] || "");
    this.drafts.save(this.language, this.editor.getSource());
    this.sendDraft();
    this.view.setStatus("Reset to the starter; your draft is kept under “Drafts kept”.", "info");
  }

  /** A past submission or a kept draft, read-only beside the current draft. */
  showPast(past) {
    if (!this.pastBox) return;
    this.past = past;
    document.getElementById("past-title").textContent = `${past.label} · ${past.language} · read-only`;
    if (!this.pastEditor) {
      this.pastEditor = new Editor(document.getElementById("past-editor"), {
        doc: past.source,
        language: past.language,
        readOnly: true,
      });
    } else this.pastEditor.setLanguage(past.language, past.source);
    this.pastBox.hidden = false;
    document.querySelector(".editors")?.classList.add("with-past");
  }

  closePast() {
    this.past = null;
    if (this.pastBox) this.pastBox.hidden = true;
    document.querySelector(".editors")?.classList.remove("with-past");
  }

  /** The shown past code into the editor; the draft it replaces is kept first. */
  restorePast() {
    if (!this.past) return;
    const { language, source, label } = this.past;
    const target = this.languages.includes(language) ? language : this.language;
    if (target !== this.language) this.switchLanguage(target);
    this.keepDraft(`before restoring ${label}`);
    this.switchLanguage(target, source);
    this.view.setStatus(`Restored ${label} into the editor; your draft is kept under “Drafts kept”.`, "info");
    this.closePast();
  }

  setBusy(busy) {
    if (this.button) {
      this.button.disabled = busy;
      this.button.setAttribute("aria-busy", busy ? "true" : "false");
    }
  }

  /** Drops the run being shown (its socket closed) and empties the result panes. */
  resetRun() {
    if (this.run) this.run.discard();
    this.run = null;
    this.view.reset();
    this.showNextStep(null);
    this.figures.clear();
    this.editor.clearDiagnostics();
  }

  async submit() {
    if (this.run && !this.run.finished) return;
    this.saveDraft.flush();
    this.sendDraft.flush();
    const source = this.editor.getSource();
    this.setBusy(true);
    this.resetRun();
    this.view.setStatus("Submitting…", "busy");
    const blockSelect = document.getElementById("block-size");
    const blockSize = blockSelect ? Number.parseInt(blockSelect.value, 10) : undefined;
    const sweep = document.getElementById("sweep-blocks")?.checked === true;
    const reply = await this.api.submit({ exercise: this.slug, language: this.language, source, blockSize, sweep });
    if (!reply.ok) {
      this.view.setStatus(reply.error, "error");
      this.setBusy(false);
      return;
    }
    const sub = reply.body;
    this.view.setStatus(`Submission #${sub.number} sent; waiting for the worker…`, "busy");
    // The socket's snapshot says where the run is, even if it already finished.
    this.startRun(sub.id, null, sub.number).live = true;
    this.refreshHistory();
  }

  /** `id` names the run in URLs (random); `number` is what the page calls it (#number). */
  startRun(id, submission, number) {
    this.profilePanel.clear();
    const run = new Run({
      profile: this.profilePanel,
      id,
      number,
      view: this.view,
      editor: this.editor,
      figures: this.figures,
      wsBase: this.config.ws_base,
      fetchDetail: (subId) => this.api.submission(subId),
      onFinish: (_run, verdict) => {
        if (this.run !== run) return;
        this.setBusy(false);
        this.showNextStep(verdict);
        if (run.live) this.view.revealVerdict();
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

  /**
   * A past submission: its result and events in the panes, its source read-only beside the draft
   * (`beside`), which stays as it is until the learner restores the past code.
   */
  async openSubmission(id, { beside = true, status } = {}) {
    const reply = await this.api.submission(id);
    if (!reply.ok) {
      this.view.setStatus(reply.error, "error");
      return;
    }
    const sub = reply.body;
    if (this.run && !this.run.finished && this.run.live) {
      // The run being followed keeps the panes; the past code still opens beside the draft.
      this.showPast({ language: sub.language, source: sub.source, label: `Submission #${sub.number}` });
      return;
    }
    this.resetRun();
    this.setBusy(false);
    if (beside && typeof sub.source === "string") {
      this.showPast({ language: sub.language, source: sub.source, label: `Submission #${sub.number}` });
    }
    this.view.setStatus(status || `Showing submission #${sub.number}.`, "info");
    this.startRun(sub.id, sub, sub.number);
  }

  /** On load: the newest run's verdict and figures, without touching the draft. */
  showLastRun(items) {
    if (!items || !items.length || this.run) return;
    this.openSubmission(items[0].id, { beside: false, status: `Your last run, #${items[0].number}.` });
  }

  async refreshHistory() {
    if (!this.config.submissions_url || !this.view.history) return [];
    const reply = await this.api.history();
    if (!reply.ok) return []; // The list is a convenience; the run view has the facts.
    const items = Array.isArray(reply.body.submissions) ? reply.body.submissions : [];
    this.view.showHistory(items, this.run ? this.run.id : null);
    return items;
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
