// The playground's code editor: CodeMirror 6 with Python (pl) highlighting, line numbers, and
// error markers at a line. Bundled by build.mjs into ../editor.js, which the page imports from
// the server: no network needed.
import {EditorState, StateEffect, StateField} from '@codemirror/state';
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection,
  Decoration, placeholder as placeholderText,
} from '@codemirror/view';
import {defaultKeymap, history, historyKeymap, indentWithTab} from '@codemirror/commands';
import {python} from '@codemirror/lang-python';
import {syntaxHighlighting, defaultHighlightStyle, indentUnit, bracketMatching} from '@codemirror/language';
import {lintGutter, setDiagnostics} from '@codemirror/lint';
import {searchKeymap, highlightSelectionMatches} from '@codemirror/search';

// A whole-line mark for the line an error names (besides the lint gutter's marker).
const setErrorLine = StateEffect.define();
const errorLine = StateField.define({
  create: () => Decoration.none,
  update(marks, tr) {
    marks = marks.map(tr.changes);
    for (const e of tr.effects) {
      if (e.is(setErrorLine)) {
        marks = e.value === null ? Decoration.none
          : Decoration.set([Decoration.line({class: 'cm-error-line'}).range(e.value)]);
      }
    }
    return marks;
  },
  provide: (f) => EditorView.decorations.from(f),
});

export function createEditor(parent, {doc = '', placeholder = '', onChange = null, onRun = null} = {}) {
  const extensions = [
    lineNumbers(), highlightActiveLineGutter(), highlightActiveLine(), drawSelection(), history(),
    bracketMatching(), highlightSelectionMatches(), lintGutter(), errorLine,
    python(), syntaxHighlighting(defaultHighlightStyle, {fallback: true}), indentUnit.of('    '),
    EditorState.tabSize.of(4),
    keymap.of([
      {key: 'Mod-Enter', run: () => { if (onRun) onRun(); return true; }},
      indentWithTab, ...defaultKeymap, ...historyKeymap, ...searchKeymap,
    ]),
    EditorView.updateListener.of((update) => { if (update.docChanged && onChange) onChange(update); }),
  ];
  if (placeholder) extensions.push(placeholderText(placeholder));
  const view = new EditorView({state: EditorState.create({doc, extensions}), parent});
  const lineAt = (line) => view.state.doc.line(Math.max(1, Math.min(line, view.state.doc.lines)));
  return {
    view,
    get text() { return view.state.doc.toString(); },
    set text(value) {
      view.dispatch({changes: {from: 0, to: view.state.doc.length, insert: value}});
    },
    // An error at `line` (1-based; `col` 1-based too, optional): a marker in the gutter with the
    // message, and the line tinted. `null` clears it.
    markError(line, col, message) {
      if (!line) {
        view.dispatch(setDiagnostics(view.state, []), {effects: setErrorLine.of(null)});
        return;
      }
      const at = lineAt(line);
      const from = col ? Math.min(at.from + col - 1, at.to) : at.from;
      view.dispatch(
        setDiagnostics(view.state, [{from, to: Math.max(from, at.to), severity: 'error', message}]),
        {effects: setErrorLine.of(at.from)},
      );
    },
    selectLine(line) {
      const at = lineAt(line);
      view.dispatch({selection: {anchor: at.from, head: at.to}, scrollIntoView: true});
      view.focus();
    },
    focus() { view.focus(); },
  };
}
