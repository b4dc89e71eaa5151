// The benchmark suite: runs each measurement in turn and renders docs/performance.md. A measurement
// that throws is reported as such (its section says why) and the others still run.
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { benchOptions, type Mode } from "./options.js";
import {
  machineInfo,
  mark,
  renderMachine,
  renderSection,
  renderTable,
  type MachineInfo,
  type Section,
} from "./report.js";
import { removeTemps } from "./stores.js";
import { measureSizes } from "./sizes.js";
import { measureResume } from "./resume.js";
import { measureOverhead } from "./overhead.js";
import { measureOverheadFs } from "./overheadFs.js";
import { measureThroughput } from "./throughput.js";
import { measureLangGraph } from "./langgraph.js";
import { measureSweep } from "./sweep.js";
import { measureMemory } from "./memory.js";
import { measureFleet } from "./fleet.js";
import { measureFleetFailover } from "./fleetFailover.js";
import { measureFleetQueues } from "./fleetQueues.js";
import { measureStreaming } from "./streaming.js";
import { measureReplayCheck } from "./replayCheck.js";
import { measureBundle } from "./bundle.js";
import { measureBrowser } from "./browser.js";
import { measureBrowserCatalogue } from "./browserCatalogue.js";
import { measureOpenList } from "./openList.js";
import { measureCompression } from "./compression.js";
import { measureXStateConformance } from "./xstateConformance.js";
import { measureDeterminism } from "./determinism.js";
import { measureChildren } from "./children.js";
import { measureSubAgents } from "./subAgents.js";
import { measureRetention } from "./retention.js";
import { measureStreamsAcross } from "./streamsAcross.js";

export const MEASUREMENTS = [
  { id: "sizes", run: measureSizes },
  { id: "resume", run: measureResume },
  { id: "overhead", run: measureOverhead },
  { id: "overheadFs", run: measureOverheadFs },
  { id: "throughput", run: measureThroughput },
  { id: "langgraph", run: measureLangGraph },
  { id: "sweep", run: measureSweep },
  { id: "memory", run: measureMemory },
  { id: "fleet", run: measureFleet },
  { id: "fleetFailover", run: measureFleetFailover },
  { id: "fleetQueues", run: measureFleetQueues },
  { id: "streaming", run: measureStreaming },
  { id: "replayCheck", run: measureReplayCheck },
  { id: "bundle", run: measureBundle },
  { id: "browser", run: measureBrowser },
  { id: "browserCatalogue", run: measureBrowserCatalogue },
  { id: "openList", run: measureOpenList },
  { id: "compression", run: measureCompression },
  { id: "xstateConformance", run: measureXStateConformance },
  { id: "determinism", run: measureDeterminism },
  { id: "children", run: measureChildren },
  { id: "subAgents", run: measureSubAgents },
  { id: "retention", run: measureRetention },
  { id: "streamsAcross", run: measureStreamsAcross },
] as const;

export interface BenchRun {
  machine: MachineInfo;
  mode: Mode;
  sections: (Section & { error?: string; seconds: number })[];
  markdown: string;
}

export interface RunBenchOptions {
  mode: Mode;
  /** Measurement ids to run (default: all). */
  only?: string[];
  command: string;
  /** The full-run block of the document being replaced: a run that is not --full carries it over. */
  previousFullBlock?: string;
  /** Called with each section as soon as it is done (the CLI prints it). */
  onSection?: (section: Section, markdown: string) => void;
  onProgress?: (message: string) => void;
}

export async function runBench(options: RunBenchOptions): Promise<BenchRun> {
  const bench = benchOptions(options.mode);
  const machine = machineInfo(options.command);
  const sections: BenchRun["sections"] = [];
  try {
    for (const measurement of MEASUREMENTS) {
      if (options.only && !options.only.includes(measurement.id)) continue;
      options.onProgress?.(`running ${measurement.id} (${options.mode})...`);
      await settleDisk();
      const start = performance.now();
      let section: BenchRun["sections"][number];
      try {
        section = { ...(await measurement.run(bench)), seconds: 0 };
      } catch (error) {
        const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
        section = {
          id: measurement.id,
          title: `${measurement.id}: failed`,
          method: [],
          tables: [],
          goals: [],
          notes: [`The measurement threw: \`${message.split("\n")[0]}\``],
          error: message,
          seconds: 0,
        };
      }
      section.seconds = (performance.now() - start) / 1000;
      machine.load.push(loadavg()[0]!);
      sections.push(section);
      options.onSection?.(
        section,
        [renderSection(section), renderSection(section, "full", "### (--full)")].filter(Boolean).join("\n\n"),
      );
    }
  } finally {
    await removeTemps();
  }
  const fullBlock = options.mode === "full" ? renderFullBlock(machine, sections) : options.previousFullBlock;
  return {
    machine,
    mode: options.mode,
    sections,
    markdown: renderDocument(machine, options.mode, sections, fullBlock),
  };
}

/**
 * Between measurements: the last one's temporary directories removed and the page cache's dirty pages
 * written back (`sync`), so one row's writeback (the 100k-blob sweep writes gigabytes) is not in the
 * next row's timings. In the full run of 2026-12-02 without it, fs rows timed after the heavy ones read
 * 1.94x and 3.01x where the same rows alone, minutes later, read 1.57x and 2.25x.
 */
async function settleDisk(): Promise<void> {
  await removeTemps();
  if (process.platform !== "win32") spawnSync("sync", { stdio: "ignore" });
}

const FULL_BEGIN = "<!-- full-run:begin -->";
const FULL_END = "<!-- full-run:end -->";

/** The full-run block of a rendered document, markers included, if it has one. */
export function fullBlockOf(markdown: string): string | undefined {
  const start = markdown.indexOf(FULL_BEGIN);
  const end = markdown.indexOf(FULL_END);
  return start >= 0 && end > start ? markdown.slice(start, end + FULL_END.length) : undefined;
}

/** What only a --full run measures, with the machine and date of that run. */
function renderFullBlock(machine: MachineInfo, sections: Section[]): string {
  const goals = sections.flatMap((s) =>
    s.goals.filter((g) => g.full).map((g) => [s.title.replace(/^\d+\.\s*/, ""), g.goal, mark(g.met), g.detail]),
  );
  return [
    FULL_BEGIN,
    "## Rows only `--full` measures (1,000 turns, 100k blobs)",
    "",
    "From the last `npm run bench -- --full`, on the machine below; a default run keeps this block as it is. These rows extend the tables above (the ratios of the sweep rows are against the smallest row of the same store above).",
    "",
    renderMachine(machine),
    "",
    renderTable({ head: ["measurement", "goal", "result", "measured"], rows: goals, align: ["l", "l", "l", "l"] }),
    "",
    ...sections.flatMap((s) => {
      const part = renderSection(s, "full", "###");
      return part ? [part, ""] : [];
    }),
    FULL_END,
  ].join("\n");
}

function renderDocument(machine: MachineInfo, mode: Mode, sections: Section[], fullBlock: string | undefined): string {
  const goals = sections.flatMap((s) =>
    s.goals.filter((g) => !g.full).map((g) => [s.title.replace(/^\d+\.\s*/, ""), g.goal, mark(g.met), g.detail]),
  );
  return [
    "# Performance",
    "",
    "<!-- Generated by `npm run bench` (bench/run.ts): do not edit by hand; rerun it. -->",
    "",
    `Measured by \`npm run bench\`${mode === "quick" ? " in quick mode (a smoke run: its figures mean nothing)" : ""} on the machine below. Sizes are exact bytes (KB = 1,000 bytes beside them). ` +
      "Times are never given in seconds: every timing is a ratio of variants run side by side in the same process or the same kind of fresh process, " +
      "interleaved, repeated, and the medians compared, because these machines are noisy; before each measurement the bench removes the last one's temporary files and writes the page cache back (`sync`). `npm run bench -- --full` adds the 1,000-turn rows and the 100k-blob sweep; " +
      "`npm run bench -- --quick` is the seconds-long smoke run CI does (`spec/bench/quick.test.ts`).",
    "",
    renderMachine(machine),
    "",
    "## Goals (issue 9)",
    "",
    renderTable({ head: ["measurement", "goal", "result", "measured"], rows: goals, align: ["l", "l", "l", "l"] }),
    "",
    ...sections.flatMap((s) => [renderSection(s), ""]),
    ...(fullBlock ? [fullBlock, ""] : []),
  ].join("\n");
}
