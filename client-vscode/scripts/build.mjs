#!/usr/bin/env node
// Bundles the extension (dist/extension.js, CommonJS for VS Code's Node host, `vscode` external)
// and the webview (dist/webview.js, an IIFE for the browser, plus dist/webview.css).
//   node scripts/build.mjs [--production] [--watch]
import { context } from 'esbuild';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeGrammars } from './grammars.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const common = {
  absWorkingDir: root,
  bundle: true,
  minify: production,
  sourcemap: production ? false : 'linked',
  logLevel: 'warning',
  legalComments: 'none',
};

const builds = [
  {
    ...common,
    entryPoints: { extension: 'src/extension.ts' },
    outdir: 'dist',
    platform: 'node',
    format: 'cjs',
    target: 'node18',
    external: ['vscode'],
    // ES modules first: jsonc-parser's UMD build requires its parts at run time (./impl/format),
    // which a bundle does not carry.
    mainFields: ['module', 'main'],
  },
  {
    ...common,
    entryPoints: { webview: 'src/webview/main.ts' },
    outdir: 'dist',
    platform: 'browser',
    format: 'iife',
    target: 'chrome114',
  },
  {
    ...common,
    entryPoints: { webview: 'src/webview/panel.css' },
    outdir: 'dist',
    sourcemap: false,
    // The codicon font panel.css imports (@vscode/codicons): dist/codicon.ttf beside webview.css.
    loader: { '.ttf': 'file' },
    assetNames: '[name]',
  },
];

const contexts = await Promise.all(builds.map((options) => context(options)));
if (watch) {
  await Promise.all(contexts.map((ctx) => ctx.watch()));
  console.log('watching src/ ...');
} else {
  await Promise.all(contexts.map((ctx) => ctx.rebuild()));
  await Promise.all(contexts.map((ctx) => ctx.dispose()));
  await writeGrammars(); // dist/grammars/: the code blocks' languages, loaded on demand
  console.log(`built dist/extension.js, dist/webview.js, dist/webview.css${production ? ' (production)' : ''}`);
}
