// Syntax colours for the answers' code blocks: shiki (VS Code's TextMate grammars) with the
// editor's own colour theme, which the extension reads and sends (code-context; src/codeTheme.ts).
// The grammars are not in this bundle: a block of a language not loaded yet asks the extension
// for it (load-grammar) and is shown plain until it comes, then coloured in place.
// Colours are set through the CSSOM (element.style), which the panel's CSP allows; no HTML with
// inline styles is ever parsed.
// shiki's primitive layer (tokens only; no HTML renderer in the bundle) and its JavaScript regex
// engine (no WebAssembly, which the panel's CSP does not allow).
import { codeToTokensBase, createShikiPrimitive, type LanguageRegistration, type ShikiPrimitive, type ThemedToken, type ThemeRegistrationAny } from '@shikijs/primitive';
import { createJavaScriptRegexEngine } from 'shiki/engine/javascript';
import type { CodeTheme, CodeMessage } from '../model/codeBlocks';

const ITALIC = 1;
const BOLD = 2;
const UNDERLINE = 4;
const CACHE_SIZE = 200;

export class Highlighter {
  private core: ShikiPrimitive | undefined;
  private theme: string | undefined;
  private themes = 0;
  /** A name as written in a fence (lower case) -> the loaded grammar's name; null: none exists. */
  private readonly langs = new Map<string, string | null>();
  private readonly asked = new Set<string>();
  /** Tokens of the blocks drawn lately, by theme, language and text (least recently used first). */
  private readonly cache = new Map<string, ThemedToken[][]>();

  constructor(
    private readonly post: (message: CodeMessage) => void,
    /** The blocks to colour again when a theme or a grammar arrives. */
    private readonly repaint: () => void,
  ) {}

  private highlighter(): ShikiPrimitive {
    this.core ??= createShikiPrimitive({ themes: [], langs: [], engine: createJavaScriptRegexEngine({ forgiving: true }) });
    return this.core;
  }

  setTheme(theme: CodeTheme | undefined): void {
    if (!theme) {
      this.theme = undefined;
    } else {
      const name = `agentls-editor-${++this.themes}`; // a theme changed in the editor loads anew
      try {
        this.highlighter().loadThemeSync({ ...theme, name } as ThemeRegistrationAny);
        this.theme = name;
      } catch (err) {
        console.warn('agentls: the colour theme could not be loaded', err);
        this.theme = undefined;
      }
    }
    this.repaint();
  }

  /** A language the extension sent (none: it has no grammar for it). */
  addGrammar(lang: string, grammars: unknown[]): void {
    const key = lang.toLowerCase();
    const own = grammars.at(-1) as LanguageRegistration | undefined;
    if (!own) {
      this.langs.set(key, null);
      return;
    }
    try {
      this.highlighter().loadLanguageSync(...(grammars as LanguageRegistration[]));
      this.langs.set(key, own.name);
    } catch (err) {
      console.warn(`agentls: the ${lang} grammar could not be loaded`, err);
      this.langs.set(key, null);
    }
    this.repaint();
  }

  /** Whether `lang` has colours now (it is asked for once when not). */
  ready(lang: string): boolean {
    const key = lang.toLowerCase();
    if (!key) return false;
    const name = this.langs.get(key);
    if (name === undefined && !this.asked.has(key)) {
      this.asked.add(key);
      this.post({ type: 'load-grammar', lang: key });
    }
    return Boolean(name && this.theme);
  }

  /** Fill `code` with `text`, coloured when the language and the theme are there. */
  paint(code: HTMLElement, text: string, lang: string): void {
    const name = this.langs.get(lang.toLowerCase());
    if (!this.ready(lang) || !name || !this.theme) {
      code.textContent = text;
      code.classList.remove('highlighted');
      return;
    }
    // A message is drawn again on every streamed delta: its finished blocks come from the cache.
    const key = `${this.theme}\0${name}\0${text}`;
    let lines = this.cache.get(key);
    if (!lines) {
      try {
        lines = codeToTokensBase(this.highlighter(), text.replace(/\n$/, ''), { lang: name, theme: this.theme });
      } catch (err) {
        console.warn(`agentls: highlighting ${lang} failed`, err);
        code.textContent = text;
        return;
      }
      if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
    } else {
      this.cache.delete(key); // most recently used last
    }
    this.cache.set(key, lines);
    const out = document.createDocumentFragment();
    lines.forEach((tokens, i) => {
      if (i) out.append('\n');
      for (const token of tokens) {
        const span = document.createElement('span');
        span.textContent = token.content;
        if (token.color) span.style.color = token.color;
        const style = token.fontStyle ?? 0;
        if (style & ITALIC) span.style.fontStyle = 'italic';
        if (style & BOLD) span.style.fontWeight = 'bold';
        if (style & UNDERLINE) span.style.textDecoration = 'underline';
        out.append(span);
      }
    });
    code.replaceChildren(out);
    code.classList.add('highlighted');
  }
}
