// What a measurement hands back, and how it is rendered: markdown tables for the console and
// docs/performance.md. Sizes are exact bytes (KB = 1000 bytes beside them, as Loom's tables);
// times appear only as ratios.
import { arch, cpus, freemem, loadavg, platform, release, totalmem } from "node:os";

export type Cell = string | number;

export interface Table {
  /** A short caption printed above the table. */
  caption?: string;
  head: string[];
  rows: Cell[][];
  /** Columns to right-align (numbers); by default every column whose cells are all numeric-looking. */
  align?: ("l" | "r")[];
  /** Rows only a `--full` run measures (1,000 turns, 100k blobs): rendered in the full-run block. */
  fullRows?: Cell[][];
  /** The whole table belongs to the full-run block. */
  full?: true;
}

/** One goal of the issue and whether this run met it. */
export interface Goal {
  goal: string;
  met: boolean | "not measured";
  detail: string;
  /** Judged on rows only a `--full` run measures: listed in the full-run block. */
  full?: true;
}

export interface Section {
  id: string;
  title: string;
  /** What was measured and how, in a few sentences. */
  method: string[];
  tables: Table[];
  goals: Goal[];
  /** Findings, breakdowns, what is left out. */
  notes: string[];
  /** Notes on the full-run rows. */
  fullNotes?: string[];
  /** Raw figures for `--json` (absolute times included: not for the tables). */
  raw?: unknown;
}

export const KB = 1000;

/** `123,456 B (123.5 KB)`. */
export function bytes(n: number): string {
  return `${Math.round(n).toLocaleString("en-US")} B (${kb(n)})`;
}

/** `123.5 KB`, or `1,234 KB` from 10 MB up. */
export function kb(n: number): string {
  const v = n / KB;
  return v >= 10_000
    ? `${Math.round(v).toLocaleString("en-US")} KB`
    : `${v.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 })} KB`;
}

/** `2.31x`. */
export function ratio(n: number, digits = 2): string {
  if (!Number.isFinite(n)) return "n/a";
  return `${n.toFixed(digits)}x`;
}

/** A ratio of wall-clock medians with the CPU-time ratio beside it: `2.31x (CPU 2.10x)`. */
export function ratios(r: { wall: number; cpu: number }): string {
  return `${ratio(r.wall)} (CPU ${ratio(r.cpu)})`;
}

export function mark(met: boolean | "not measured"): string {
  return met === "not measured" ? "not measured" : met ? "met" : "**missed**";
}

export function renderTable(table: Table): string {
  const numeric = (c: Cell) => typeof c === "number" || /^[~≈]?[\d.,]+( ?(B|KB|x|%))?/.test(String(c));
  const align =
    table.align ??
    table.head.map((_, i) => (table.rows.length > 0 && table.rows.every((r) => numeric(r[i] ?? "")) ? "r" : "l"));
  const cell = (c: Cell) => String(typeof c === "number" ? c.toLocaleString("en-US") : c).replace(/\|/g, "\\|");
  const lines = [
    `| ${table.head.map(cell).join(" | ")} |`,
    `|${align.map((a) => (a === "r" ? "---:" : "---")).join("|")}|`,
    ...table.rows.map((r) => `| ${r.map(cell).join(" | ")} |`),
  ];
  return (table.caption ? `${table.caption}\n\n` : "") + lines.join("\n");
}

export function goalsTable(goals: Goal[]): Table {
  return {
    head: ["goal", "result", "measured"],
    rows: goals.map((g) => [g.goal, mark(g.met), g.detail]),
    align: ["l", "l", "l"],
  };
}

/**
 * A section as markdown: `main` is what every run shows; `full` is only what a `--full` run added (its
 * extra rows, full-only tables and goals), or "" when it added nothing.
 */
export function renderSection(section: Section, part: "main" | "full" = "main", heading = "##"): string {
  const tables =
    part === "main"
      ? section.tables.filter((t) => !t.full)
      : section.tables.flatMap((t) =>
          t.full ? [t] : t.fullRows && t.fullRows.length > 0 ? [{ ...t, rows: t.fullRows }] : [],
        );
  const goals = section.goals.filter((g) => (part === "full") === (g.full === true));
  const notes = part === "main" ? section.notes : (section.fullNotes ?? []);
  if (part === "full" && tables.length === 0 && goals.length === 0) return "";
  const parts = [`${heading} ${section.title}`, ...(part === "main" ? [section.method.join("\n")] : [])];
  for (const table of tables) parts.push(renderTable(table));
  if (goals.length > 0) parts.push(renderTable(goalsTable(goals)));
  if (notes.length > 0) parts.push(notes.map((n) => `- ${n}`).join("\n"));
  return parts.join("\n\n");
}

export interface MachineInfo {
  os: string;
  cpu: string;
  cores: number;
  memory: string;
  node: string;
  date: string;
  command: string;
  /** 1-minute load averages sampled when each measurement ended (other work on the machine). */
  load: number[];
}

export function machineInfo(command: string): MachineInfo {
  const cpu = cpus();
  return {
    os: `${platform()} ${release()} (${arch()})`,
    cpu: cpu[0]?.model.trim() ?? "unknown",
    cores: cpu.length,
    memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB (${(freemem() / 2 ** 30).toFixed(1)} GiB free at start)`,
    node: process.version,
    date: new Date().toISOString(),
    command,
    load: [loadavg()[0]!],
  };
}

export function renderMachine(m: MachineInfo): string {
  return renderTable({
    head: ["machine", ""],
    rows: [
      ["os", m.os],
      ["cpu", m.cpu],
      ["cores", String(m.cores)],
      ["memory", m.memory],
      ["node", m.node],
      ["date", m.date],
      ["command", `\`${m.command}\``],
      ["load average (1 min) at the start and after each measurement", m.load.map((l) => l.toFixed(1)).join(", ")],
    ],
    align: ["l", "l"],
  });
}
