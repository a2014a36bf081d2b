// Build ../editor.js, the one ES module the playground page imports (CodeMirror 6 and its Python
// mode, bundled and minified). Run after changing editor-src.js or package.json:
//     cd nanopto/tools/playground/editor && npm ci && npm run build
// and commit ../editor.js; the wheel ships the built file, never node_modules.
import {build} from 'esbuild';

const LICENSE = "MIT License\n\nCopyright (C) 2016-2024 by Marijn Haverbeke <marijn@haverbeke.berlin> and others\n(CodeMirror 6: @codemirror/*, @lezer/*, crelt, style-mod, w3c-keyname, @marijn/find-cluster-break)\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\nof this software and associated documentation files (the \"Software\"), to deal\nin the Software without restriction, including without limitation the rights\nto use, copy, modify, merge, publish, distribute, sublicense, and/or sell\ncopies of the Software, and to permit persons to whom the Software is\nfurnished to do so, subject to the following conditions:\n\nThe above copyright notice and this permission notice shall be included in\nall copies or substantial portions of the Software.\n\nTHE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR\nIMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,\nFITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE\nAUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER\nLIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,\nOUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN\nTHE SOFTWARE.";

await build({
  entryPoints: ['editor-src.js'],
  bundle: true,
  format: 'esm',
  minify: true,
  target: 'es2020',
  legalComments: 'eof',
  outfile: '../editor.js',
  banner: {js: `// nanopto playground editor, built by editor/build.mjs from CodeMirror 6:\n/*\n${LICENSE}\n*/`},
});
