// Builds the browser bundle into Django's static files:
//   ../labs/static/labs/build/app.js (+ .map), app.css (+ .map), plotly.min.js
// Works offline once `npm ci` has installed node_modules.

import { build } from "esbuild";
import { copyFile, mkdir, rm, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const outdir = path.resolve(here, "../labs/static/labs/build");
const require = createRequire(import.meta.url);

await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });

await build({
  absWorkingDir: here,
  entryPoints: { app: "src/main.js" },
  outdir,
  bundle: true,
  minify: true,
  sourcemap: true,
  format: "iife",
  target: "es2020",
  legalComments: "linked",
  logLevel: "warning",
});

const plotlySource = require.resolve("plotly.js-dist-min/plotly.min.js");
await copyFile(plotlySource, path.join(outdir, "plotly.min.js"));

for (const name of ["app.js", "app.css", "plotly.min.js"]) {
  const { size } = await stat(path.join(outdir, name));
  console.log(`${name.padEnd(14)} ${(size / 1024).toFixed(1).padStart(8)} KiB`);
}
console.log(`built into ${path.relative(process.cwd(), outdir) || outdir}`);
