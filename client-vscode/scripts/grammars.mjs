// The TextMate grammars the panel highlights code blocks with (shiki's, from @shikijs/langs),
// written to dist/grammars/<name>.json, one file per language with the languages it embeds, and
// dist/grammars/index.json (every name and alias -> its file). The webview does not bundle them:
// it asks the extension for a language when an answer first shows a block of it (src/codeTheme.ts).
//   node scripts/grammars.mjs        (build.mjs runs it)
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

/** The languages offered: what coding answers mostly show. */
export const LANGUAGES = [
  'python', 'typescript', 'javascript', 'tsx', 'jsx', 'json', 'jsonc', 'shellscript', 'powershell', 'bat',
  'diff', 'yaml', 'toml', 'ini', 'xml', 'html', 'css', 'scss', 'markdown', 'sql', 'rust', 'go', 'java',
  'kotlin', 'c', 'cpp', 'csharp', 'swift', 'lua', 'dockerfile', 'make',
];

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export async function writeGrammars(out = join(root, 'dist', 'grammars')) {
  const require = createRequire(join(root, 'package.json'));
  mkdirSync(out, { recursive: true });
  const index = {};
  for (const name of LANGUAGES) {
    const file = require.resolve(`@shikijs/langs/${name}`);
    const grammars = (await import(pathToFileURL(file).href)).default;
    writeFileSync(join(out, `${name}.json`), JSON.stringify(grammars));
    const own = grammars[grammars.length - 1];
    for (const alias of [name, own.name, ...(own.aliases ?? [])]) index[alias.toLowerCase()] ??= name;
  }
  writeFileSync(join(out, 'index.json'), JSON.stringify(index));
  return index;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const index = await writeGrammars();
  console.log(`wrote dist/grammars/ (${LANGUAGES.length} languages, ${Object.keys(index).length} names)`);
}
