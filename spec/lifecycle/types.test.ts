// Type tests for the data-lifecycle surface, through its entry point (loomwork/lifecycle) and the names
// API.md keeps in the main one.
import { describe, expectTypeOf, it } from "vitest";
import type { App } from "../../index.js";
import * as main from "../../index.js";
import type {
  ArchiveOptions,
  ArchiveResult,
  ClaimCheckedBlob,
  EraseSubjectOptions,
  EraseSubjectResult,
  SubjectExport,
  SweepOptions,
  SweepResult,
  SweepUnpinnedContentOptions,
  UnresolvedCitation,
} from "../../lifecycle.js";
import {
  archive,
  eraseSubject,
  exportSubject,
  sweep,
  sweepUnpinnedContent,
  visitCitedAddresses,
} from "../../lifecycle.js";

describe("the lifecycle API's types", () => {
  it("functions of an app, which the App itself no longer carries", () => {
    expectTypeOf(sweep).parameters.toEqualTypeOf<[App, SweepOptions]>();
    expectTypeOf(sweep).returns.resolves.toEqualTypeOf<SweepResult>();
    const erase = (app: App) => eraseSubject(app, "A");
    expectTypeOf(erase).returns.resolves.toEqualTypeOf<EraseSubjectResult>();
    const exported = (app: App) => exportSubject(app, "A");
    expectTypeOf(exported).returns.resolves.toEqualTypeOf<SubjectExport>();
    expectTypeOf(archive).parameters.toEqualTypeOf<[App, string, ArchiveOptions?]>();
    expectTypeOf(archive).returns.resolves.toEqualTypeOf<ArchiveResult>();
    expectTypeOf<App["deleteHistory"]>().returns.resolves.toBeVoid();
    for (const method of [
      "sweep",
      "eraseSubject",
      "exportSubject",
      "archive",
      "checkReplay",
      "migrate",
      "readModels",
    ] as const) {
      expectTypeOf<App>().not.toHaveProperty(method);
    }
  });

  it("standalone entry points and results", () => {
    expectTypeOf(sweepUnpinnedContent).parameter(0).toEqualTypeOf<SweepUnpinnedContentOptions>();
    const erase = (options: EraseSubjectOptions) => eraseSubject("A", options);
    expectTypeOf(erase).returns.resolves.toEqualTypeOf<EraseSubjectResult>();
    const exported = () => exportSubject("A", { events: undefined! });
    expectTypeOf(exported).returns.resolves.toHaveProperty("claimChecked").toEqualTypeOf<ClaimCheckedBlob[]>();
    expectTypeOf(exported).returns.resolves.toHaveProperty("unresolved").toEqualTypeOf<UnresolvedCitation[]>();
    expectTypeOf<UnresolvedCitation>().toEqualTypeOf<{ address: string; citedBy: string[] }>();
    expectTypeOf<EraseSubjectResult["contentDeleted"]>().toEqualTypeOf<{ deleted: number; retained: number }>();
    expectTypeOf<SweepResult>().toHaveProperty("spared").toBeNumber();
    // @ts-expect-error ttlMs is required
    const _missingTtl = () => sweepUnpinnedContent({ events: undefined!, content: undefined! });
    // @ts-expect-error the standalone form needs its stores
    const _missingStores = () => eraseSubject("A");
    expectTypeOf(visitCitedAddresses).parameter(1).parameter(1).toHaveProperty("loadBearing").toBeBoolean();
  });

  it("the main entry keeps API.md's lifecycle names, the same functions", () => {
    expectTypeOf(main.eraseSubject).toEqualTypeOf(eraseSubject);
    expectTypeOf(main.exportSubject).toEqualTypeOf(exportSubject);
    expectTypeOf(main.sweepUnpinnedContent).toEqualTypeOf(sweepUnpinnedContent);
    expectTypeOf(main.visitCitedAddresses).toEqualTypeOf(visitCitedAddresses);
  });
});
