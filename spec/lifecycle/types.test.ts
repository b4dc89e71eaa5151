// Type tests for the data-lifecycle surface, through the public entry point.
import { describe, expectTypeOf, it } from "vitest";
import type {
  App,
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
} from "../../index.js";
import { eraseSubject, exportSubject, sweepUnpinnedContent, visitCitedAddresses } from "../../index.js";

describe("the lifecycle API's types", () => {
  it("app methods", () => {
    expectTypeOf<App["sweep"]>().parameters.toEqualTypeOf<[SweepOptions]>();
    expectTypeOf<App["sweep"]>().returns.resolves.toEqualTypeOf<SweepResult>();
    expectTypeOf<App["eraseSubject"]>().returns.resolves.toEqualTypeOf<EraseSubjectResult>();
    expectTypeOf<App["exportSubject"]>().returns.resolves.toEqualTypeOf<SubjectExport>();
    expectTypeOf<App["archive"]>().parameters.toEqualTypeOf<[string, ArchiveOptions?]>();
    expectTypeOf<App["archive"]>().returns.resolves.toEqualTypeOf<ArchiveResult>();
    expectTypeOf<App["deleteHistory"]>().returns.resolves.toBeVoid();
  });

  it("standalone entry points and results", () => {
    expectTypeOf(sweepUnpinnedContent).parameter(0).toEqualTypeOf<SweepUnpinnedContentOptions>();
    expectTypeOf(eraseSubject).parameters.toEqualTypeOf<[string, EraseSubjectOptions]>();
    expectTypeOf(exportSubject).returns.resolves.toHaveProperty("claimChecked").toEqualTypeOf<ClaimCheckedBlob[]>();
    expectTypeOf(exportSubject).returns.resolves.toHaveProperty("unresolved").toEqualTypeOf<UnresolvedCitation[]>();
    expectTypeOf<UnresolvedCitation>().toEqualTypeOf<{ address: string; citedBy: string[] }>();
    expectTypeOf<EraseSubjectResult["contentDeleted"]>().toEqualTypeOf<{ deleted: number; retained: number }>();
    expectTypeOf<SweepResult>().toHaveProperty("spared").toBeNumber();
    // @ts-expect-error ttlMs is required
    const _missingTtl = () => sweepUnpinnedContent({ events: undefined!, content: undefined! });
    expectTypeOf(visitCitedAddresses).parameter(1).parameter(1).toHaveProperty("loadBearing").toBeBoolean();
  });
});
