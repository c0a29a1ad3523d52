/**
 * The CodeMirror 6 editor: Python for numba, C++ for CUDA, one dark theme,
 * and diagnostics (compiler, runtime, the simulator's memory report) shown as
 * gutter markers whose hover reads the sentence, and as a line class per
 * severity (`cm-error-line`, `cm-warning-line`, `cm-info-line`). Mod-Enter
 * submits; a read-only instance shows a past submission.
 */

import { basicSetup } from "codemirror";
import { cpp } from "@codemirror/lang-cpp";
import { python } from "@codemirror/lang-python";
import { lintGutter, setDiagnostics } from "@codemirror/lint";
import { EditorState, StateEffect, StateField } from "@codemirror/state";
import { Decoration, EditorView, keymap } from "@codemirror/view";
import { indentWithTab } from "@codemirror/commands";
import { oneDark } from "@codemirror/theme-one-dark";

import { lineSeverities, toLintDiagnostics } from "./diagnostics.js";

const setErrorLines = StateEffect.define();
const lineDeco = {
  error: Decoration.line({ class: "cm-error-line" }),
  warning: Decoration.line({ class: "cm-warning-line" }),
  info: Decoration.line({ class: "cm-info-line" }),
  hint: Decoration.line({ class: "cm-info-line" }),
};

const errorLines = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    let next = deco.map(tr.changes);
    for (const effect of tr.effects) {
      if (effect.is(setErrorLines)) next = effect.value;
    }
    return next;
  },
  provide: (field) => EditorView.decorations.from(field),
});

function languageExtension(language) {
  return language === "cuda" ? cpp() : python();
}

const pageTheme = EditorView.theme({
  "&": { height: "100%", fontSize: "14px" },
  ".cm-scroller": { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" },
  ".cm-error-line": { backgroundColor: "rgba(255, 80, 80, 0.18)" },
  ".cm-warning-line": { backgroundColor: "rgba(255, 190, 60, 0.16)" },
  ".cm-info-line": { backgroundColor: "rgba(90, 160, 255, 0.08)" },
});

/** A thin wrapper over one EditorView whose state is rebuilt per language. */
export class Editor {
  constructor(parent, { doc = "", language = "numba", onChange = () => {}, onSubmit = null, readOnly = false } = {}) {
    this.onChange = onChange;
    this.onSubmit = onSubmit;
    this.readOnly = readOnly;
    this.language = language;
    this.view = new EditorView({ parent, state: this.makeState(doc, language) });
  }

  makeState(doc, language) {
    return EditorState.create({
      doc,
      extensions: [
        // Before basicSetup, so Mod-Enter submits instead of inserting a blank line.
        keymap.of([{ key: "Mod-Enter", preventDefault: true, run: () => (this.onSubmit ? (this.onSubmit(), true) : false) }]),
        basicSetup,
        keymap.of([indentWithTab]),
        EditorState.readOnly.of(this.readOnly),
        EditorView.editable.of(!this.readOnly),
        languageExtension(language),
        oneDark,
        pageTheme,
        lintGutter(),
        errorLines,
        EditorView.contentAttributes.of({ "aria-label": `${language} source${this.readOnly ? " (read-only)" : ""}` }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) this.onChange(update.state.doc.toString());
        }),
      ],
    });
  }

  /** Switches language with a fresh state (own undo history) holding `doc`. */
  setLanguage(language, doc) {
    this.language = language;
    this.view.setState(this.makeState(doc, language));
  }

  getSource() {
    return this.view.state.doc.toString();
  }

  /** Replaces the whole text as one undoable change. */
  setSource(text) {
    const doc = this.view.state.doc;
    this.view.dispatch({ changes: { from: 0, to: doc.length, insert: String(text) } });
  }

  /** Marks compiler diagnostics ({line, column, severity, message}, 1-based) in the editor. */
  showDiagnostics(diagnostics) {
    const state = this.view.state;
    const spec = setDiagnostics(state, toLintDiagnostics(state.doc, diagnostics));
    const lines = lineSeverities(state.doc, diagnostics).map(({ from, severity }) => lineDeco[severity].range(from));
    const effects = [].concat(spec.effects || [], setErrorLines.of(Decoration.set(lines, true)));
    this.view.dispatch({ effects });
  }

  clearDiagnostics() {
    this.showDiagnostics([]);
  }

  focus() {
    this.view.focus();
  }
}
