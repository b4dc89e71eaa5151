// WCAG 2 contrast of every text on the page, computed in the page: each element that holds text directly, its
// computed color against the first opaque background up its ancestors (translucent ones blended in). Used by the
// story specs to hold muted text and pills at 4.5:1 or more (issue 36 measured 4.16-4.43).

/** Runs in the page: the lowest contrast ratios found, worst first, with the element's text. */
export function lowestContrasts(): { ratio: number; text: string; color: string; background: string }[] {
  type Rgba = [number, number, number, number];
  const parse = (value: string): Rgba | undefined => {
    const m = /rgba?\(([\d.]+)[ ,]+([\d.]+)[ ,]+([\d.]+)(?:[ ,/]+([\d.]+))?\)/.exec(value);
    return m ? [Number(m[1]), Number(m[2]), Number(m[3]), m[4] === undefined ? 1 : Number(m[4])] : undefined;
  };
  const blend = (top: Rgba, bottom: Rgba): Rgba => {
    const a = top[3];
    return [0, 1, 2].map((i) => top[i]! * a + bottom[i]! * (1 - a)).concat(1) as Rgba;
  };
  const luminance = ([r, g, b]: Rgba) => {
    const channel = (c: number) => {
      const s = c / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  };
  const backgroundOf = (element: Element): Rgba => {
    const layers: Rgba[] = [];
    for (let node: Element | null = element; node; node = node.parentElement) {
      const color = parse(getComputedStyle(node).backgroundColor);
      if (color && color[3] > 0) {
        layers.push(color);
        if (color[3] >= 1) break;
      }
    }
    return layers.reduceRight<Rgba>((under, layer) => blend(layer, under), [255, 255, 255, 1]);
  };
  const found: { ratio: number; text: string; color: string; background: string }[] = [];
  for (const element of document.body.querySelectorAll("*")) {
    const own = [...element.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim() !== "");
    if (!own || (element as HTMLElement).offsetParent === null) continue;
    const style = getComputedStyle(element);
    if (style.visibility === "hidden" || Number(style.opacity) < 1) continue;
    const color = parse(style.color);
    if (!color) continue;
    const background = backgroundOf(element);
    const fore = blend(color, background);
    const [hi, lo] = [luminance(fore), luminance(background)].sort((a, b) => b - a) as [number, number];
    found.push({
      ratio: Math.round(((hi + 0.05) / (lo + 0.05)) * 100) / 100,
      text: element.textContent!.trim().slice(0, 40),
      color: style.color,
      background: `rgb(${background.slice(0, 3).map(Math.round).join(", ")})`,
    });
  }
  return found.sort((a, b) => a.ratio - b.ratio).slice(0, 8);
}
