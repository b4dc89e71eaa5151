// Output for the CLI: colour only on a TTY (NO_COLOR and --no-color turn it off, FORCE_COLOR on),
// aligned tables, sizes, and a progress bar on stderr that only a TTY sees.

type Paint = (text: string | number) => string;

export interface Palette {
  readonly on: boolean;
  bold: Paint;
  dim: Paint;
  red: Paint;
  green: Paint;
  yellow: Paint;
  blue: Paint;
  magenta: Paint;
  cyan: Paint;
}

export function palette(stream: { isTTY?: boolean }, disabled = false): Palette {
  const env = process.env;
  const forced = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "false";
  const on = !disabled && (forced || (!("NO_COLOR" in env) && stream.isTTY === true));
  const sgr =
    (open: number, close: number): Paint =>
    (text) =>
      on ? `\u001b[${open}m${text}\u001b[${close}m` : String(text);
  return {
    on,
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    blue: sgr(34, 39),
    magenta: sgr(35, 39),
    cyan: sgr(36, 39),
  };
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

// C0 controls, DEL and C1 controls: what a terminal may act on (ESC starts sequences that retitle, clear or
// move; U+009B is the one-character CSI). Journal content is data: none of these reaches the terminal raw.
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
// eslint-disable-next-line no-control-regex
const CONTROLS_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// eslint-disable-next-line no-control-regex
const SGR_OR_CONTROL = /\u001b\[[0-9;]*m|[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
const NAMED: Record<string, string> = { "\b": "\\b", "\t": "\\t", "\n": "\\n", "\r": "\\r" };
const escapeControl = (char: string): string => NAMED[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * `text` with every control character written out as the escape that names it (`\u001b`, `\r`), so an
 * execution id, a subject or a model's text shows what it holds instead of acting on the terminal. With
 * `lines`, newlines and tabs stay as they are (a model's text runs over lines); every other control is escaped.
 * Every printer of journal content goes through it (and `context.ts` puts every line through `terminalLine`).
 */
export function printable(text: string, options: { lines?: boolean } = {}): string {
  return text.replace(options.lines ? CONTROLS_BUT_LINES : CONTROLS, escapeControl);
}

/**
 * A line the CLI assembled, as it goes to the terminal: its line breaks and tabs kept, the palette's colour sequences
 * kept where colour is on, every other control character escaped. The last guard: a value a command forgot
 * to pass through `printable` still cannot clear or retitle the terminal.
 */
export function terminalLine(line: string, colour: boolean): string {
  return line.replace(SGR_OR_CONTROL, (match) => (match.length > 1 && colour ? match : printable(match)));
}

/** JSON text as the CLI prints it: `JSON.stringify` escapes C0 controls, this also DEL and C1 (`\u009b`), so it parses back to the same value. */
export function jsonText(value: unknown, space?: number): string {
  return (JSON.stringify(value, null, space) ?? "null").replace(/[\u007f-\u009f]/g, escapeControl);
}

// East Asian Wide and Fullwidth (UAX #11) outside the emoji: Hangul Jamo, CJK radicals to symbols (but U+303F),
// kana, CJK ideographs, Yi, Hangul syllables, compatibility ideographs, vertical and small forms, fullwidth
// forms and signs, and the supplementary ideographic planes.
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{1f200}-\u{1f2ff}\u{20000}-\u{2fffd}\u{30000}-\u{3fffd}]/u;
// Shown as an emoji (two cells): emoji presentation by default, or asked for with VS16 (U+FE0F), or a flag.
const EMOJI = /\p{Emoji_Presentation}|\p{Extended_Pictographic}\ufe0f|\p{Regional_Indicator}{2}/u;
// Takes no cell of its own: combining marks, format characters (ZWJ, ZWSP), variation selectors.
const ZERO = /^[\p{Mn}\p{Me}\p{Cf}\ufe00-\ufe0f]+$/u;
const ASCII = /^[\x20-\x7e]*$/;
let graphemes: Intl.Segmenter | undefined;

/** The terminal cells `text` takes (colour sequences take none): two for East Asian wide characters and emoji, none for combining marks. */
export function displayWidth(text: string): number {
  const plain = text.replace(ANSI, "");
  if (ASCII.test(plain)) return plain.length;
  let width = 0;
  for (const { segment } of (graphemes ??= new Intl.Segmenter(undefined, { granularity: "grapheme" })).segment(plain))
    width +=
      EMOJI.test(segment) || WIDE.test(String.fromCodePoint(segment.codePointAt(0)!)) ? 2 : ZERO.test(segment) ? 0 : 1;
  return width;
}

/** `text` padded with spaces to `width` cells (as padEnd, counting cells). */
export const padEndTo = (text: string, width: number): string =>
  text + " ".repeat(Math.max(0, width - displayWidth(text)));

/** Rows as aligned columns, widths in terminal cells (displayWidth); the last column is never padded. `right` lists right-aligned column indexes. */
export function table(rows: string[][], right: number[] = []): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, displayWidth(cell))));
  return rows.map((row) =>
    row
      .map((cell, i) => {
        if (i === row.length - 1 && !right.includes(i)) return cell;
        const pad = " ".repeat(widths[i]! - displayWidth(cell));
        return right.includes(i) ? pad + cell : cell + pad;
      })
      .join("  ")
      .trimEnd(),
  );
}

/** 512 B, 12.3 KiB, 4.0 MiB. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

/** +0 ms, +152 ms, +1.24 s, +3 min 2 s: a gap since the first record. */
export function gap(milliseconds: number): string {
  if (milliseconds < 1000) return `+${Math.round(milliseconds)} ms`;
  if (milliseconds < 60_000) return `+${(milliseconds / 1000).toFixed(2)} s`;
  const minutes = Math.floor(milliseconds / 60_000);
  return minutes < 60
    ? `+${minutes} min ${Math.round((milliseconds % 60_000) / 1000)} s`
    : `+${(minutes / 60).toFixed(1)} h`;
}

/** 2026-11-30 22:22:03 in local time. */
export function timestamp(at: number | undefined): string {
  if (at === undefined) return "—";
  const d = new Date(at);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export interface Progress {
  tick(done: number, total?: number): void;
  end(): void;
}

const SILENT: Progress = { tick: () => undefined, end: () => undefined };

/**
 * A progress bar on stderr for long work, redrawn at most every 80 ms, only when stderr is a TTY and
 * the work is long enough (`atLeast` units) to deserve one. Erased when the work ends.
 */
export function progress(
  label: string,
  total: number,
  options: { atLeast?: number; stream?: NodeJS.WriteStream } = {},
): Progress {
  const stream = options.stream ?? process.stderr;
  if (!stream.isTTY || total < (options.atLeast ?? 1)) return SILENT;
  let last = 0;
  let shown = false;
  const draw = (done: number, of: number) => {
    const width = 28;
    const ratio = of > 0 ? Math.min(1, done / of) : 0;
    const filled = Math.round(ratio * width);
    stream.write(
      `\r${label} [${"█".repeat(filled)}${"░".repeat(width - filled)}] ${String(Math.round(ratio * 100)).padStart(3)}% ${done}/${of}`,
    );
    shown = true;
  };
  return {
    tick(done, of = total) {
      const now = Date.now();
      if (now - last < 80 && done < of) return;
      last = now;
      draw(done, of);
    },
    end() {
      if (shown) stream.write("\r\u001b[2K");
    },
  };
}
