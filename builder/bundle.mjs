// The front end, built by one esbuild run (builder/bundle.py starts it): every entry point of the site's classic
// scripts, plus the theme's stylesheets minified. Classic IIFE scripts, not ES modules, because
// <script type="module"> does not load from file://.
//
//   node bundle.mjs <spec.json>     spec: { esbuild, outdir, minify, themeJs, entries: [{out, path, widget?}], css: [path] }
//
// A widget kind's module imports the theme's helpers as `@theme/…` (e.g. `@theme/widgets/common.js`): the course's
// folders are outside the theme, and this keeps the path the same wherever they are.
//
// Two kinds of entry are made here rather than kept as files:
// * `{widget: name, path}` — the page script of one widget kind: it mounts the kind's `widget.js` (`path`, in the
//   course's folder for the kind: builder/course.py) on every `.widget[data-widget=name]`;
// * an import ending in `?bundle-text` — that module bundled on its own and imported as its code (a string): the
//   Python runtime starts its workers from those strings through blob: URLs (they cannot be files on file://).
// Prints JSON {files: {relative name: text}, css: {path: text}}: nothing is written, bundle.py puts it in the site.
import { readFileSync } from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const esbuild = createRequire(import.meta.url)(spec.esbuild);
// nodePaths: a theme outside the project (e.g. a copy in a test) still finds the project's npm packages
const common = { bundle: true, format: "iife", target: "es2020", charset: "utf8", legalComments: "none",
  minify: spec.minify, logLevel: "warning", loader: { ".py": "text" }, nodePaths: [spec.nodeModules] };

const widgetEntries = {
  name: "widget-entries",
  setup(build) {
    build.onResolve({ filter: /^widget-entry:/ }, (args) => ({ path: args.path.slice("widget-entry:".length),
      namespace: "widget-entry" }));
    build.onLoad({ filter: /.*/, namespace: "widget-entry" }, (args) => {
      const entry = spec.entries.find((e) => e.widget === args.path);
      return {
        resolveDir: path.join(spec.themeJs, "widgets"),
        contents: `import { mountWidgets } from "./index.js";\nimport { mount } from ${JSON.stringify(entry.path)};\n`
          + `mountWidgets(document, ${JSON.stringify(args.path)}, mount);\n`,
      };
    });
    build.onResolve({ filter: /^@theme\// }, (args) => ({ path: path.join(spec.themeJs, args.path.slice("@theme/".length)) }));
  },
};

const bundleText = {
  name: "bundle-text",
  setup(build) {
    build.onResolve({ filter: /\?bundle-text$/ }, (args) => ({
      path: path.resolve(args.resolveDir, args.path.slice(0, -"?bundle-text".length)), namespace: "bundle-text" }));
    build.onLoad({ filter: /.*/, namespace: "bundle-text" }, async (args) => {
      const result = await esbuild.build({ ...common, entryPoints: [args.path], write: false, outdir: spec.outdir });
      return { contents: result.outputFiles[0].text, loader: "text", watchFiles: Object.keys(result.metafile?.inputs || {}) };
    });
  },
};

const entryPoints = spec.entries.map((e) => ({ in: e.widget ? `widget-entry:${e.widget}` : e.path, out: e.out }));
let result;
try {
  result = await esbuild.build({ ...common, entryPoints, outdir: spec.outdir, write: false, plugins: [widgetEntries, bundleText] });
} catch (err) { // esbuild has printed its diagnostics (path:line: message); no Node stack trace after them
  process.exit(1);
}
const files = {};
for (const file of result.outputFiles) files[path.relative(spec.outdir, file.path).split(path.sep).join("/")] = file.text;
const css = {};
for (const file of spec.css) {
  css[file] = (await esbuild.transform(readFileSync(file, "utf8"), { loader: "css", minify: true, charset: "utf8",
    logLevel: "warning" })).code;
}
process.stdout.write(JSON.stringify({ files, css }));
