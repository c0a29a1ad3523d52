/**
 * The CodeMirror 6 editor: Python for numba, C++ for CUDA, one dark theme,
 * and compiler diagnostics shown both as lint marks and as a `cm-error-line`
 * class on each offending line.
 */

import { basicSetup } from "codemirror";
import { cpp } from "@codemirror/lang-cpp";
import { python } from "@codemirror/lang-python";
import { lintGutter, setDiagnostics } from "@codemirror/lint";
import { EditorState, StateEffect, StateField } from "@codemirror/state";
import { Decoration, EditorView, keymap } from "@codemirror/view";
import { indentWithTab } from "@codemirror/commands";
import { oneDark } from "@codemirror/theme-one-dark";

import { errorLineStarts, toLintDiagnostics } from "./diagnostics.js";

const setErrorLines = StateEffect.define();
const errorLineDeco = Decoration.line({ class: "cm-error-line" });

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
});

/** A thin wrapper over one EditorView whose state is rebuilt per language. */
export class Editor {
  constructor(parent, { doc = "", language = "numba", onChange = () => {} } = {}) {
    this.onChange = onChange;
    this.language = language;
    this.view = new EditorView({ parent, state: this.makeState(doc, language) });
  }

  makeState(doc, language) {
    return EditorState.create({
      doc,
      extensions: [
        basicSetup,
        keymap.of([indentWithTab]),
        languageExtension(language),
        oneDark,
        pageTheme,
        lintGutter(),
        errorLines,
        EditorView.contentAttributes.of({ "aria-label": `${language} source` }),
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
    const lines = errorLineStarts(state.doc, diagnostics).map((pos) => errorLineDeco.range(pos));
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
