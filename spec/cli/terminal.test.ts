// Column widths in terminal cells, not code points: CJK, emoji and the lock glyph take two cells.
import { describe, expect, it } from "vitest";
import { displayWidth, padEndTo, table } from "../../cli/terminal.js";

describe("displayWidth", () => {
  it("counts terminal cells", () => {
    expect(displayWidth("owls")).toBe(4);
    expect(displayWidth("\u001b[1mowls\u001b[22m")).toBe(4);
    expect(displayWidth("🔒")).toBe(2);
    expect(displayWidth("猫头鹰")).toBe(6);
    expect(displayWidth("ｆｕｌｌ")).toBe(8);
    expect(displayWidth("한글")).toBe(4);
    expect(displayWidth("🦉 owl")).toBe(6);
    expect(displayWidth("❤️")).toBe(2);
    expect(displayWidth("👩‍👩‍👧")).toBe(2);
    expect(displayWidth("🇫🇷")).toBe(2);
    expect(displayWidth("é")).toBe(1);
    expect(displayWidth("e\u0301")).toBe(1);
    expect(displayWidth("✓ → ⋯ —")).toBe(7);
  });
});

describe("table", () => {
  it("aligns columns holding CJK, emoji and the lock glyph", () => {
    const lines = table([
      ["ID", "STATUS", "N"],
      ["猫头鹰-1", "done", "1"],
      ["🔒 sealed", "running", "2"],
      ["owl-🦉", "done", "3"],
      ["plain", "done", "4"],
    ]);
    const column = (line: string) => displayWidth(line.slice(0, line.lastIndexOf(" ") + 1));
    expect(new Set(lines.map(column)).size).toBe(1);
    expect(lines[1]).toBe("猫头鹰-1   done     1");
    expect(lines[2]).toBe("🔒 sealed  running  2");
  });

  it("pads to a width in cells", () => {
    expect(padEndTo("猫", 4)).toBe("猫  ");
    expect(padEndTo("owls", 2)).toBe("owls");
  });
});
