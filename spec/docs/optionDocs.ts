// Which option properties of the public entry points have no TSDoc: what an editor shows on hover when
// a user writes `createApp(stores, { ... })` or `fsStores({ ... })`. Used by spec/docs/optionDocs.test.ts;
// also a command:
//   npx tsx spec/docs/optionDocs.ts   every undocumented property as Type.path (file:line), exit 1 if any
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { entryPoints } from "./extract.js";

const ROOT = join(fileURLToPath(new URL("../..", import.meta.url)));

/** An exported type is an options type when its name says so: `StartOptions`, `LoomConfig`, `RedactOption`. */
export const OPTIONS_NAME = /(Options?|Config)$/;

/** One option property with no doc comment, where a user meets it: `LoomConfig.execution.maxSteps`. */
export interface UndocumentedOption {
  name: string;
  file: string;
  line: number;
}

/** Every property of every exported options type of the package's entry points, as `Type.path`, with whether it is documented. */
export interface OptionProperty extends UndocumentedOption {
  documented: boolean;
}

/** The program over the entry points' sources, under the checkout's tsconfig.json. */
function program(root: string, entries: string[]): ts.Program {
  const configFile = ts.readConfigFile(join(root, "tsconfig.json"), (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
  return ts.createProgram(entries, { ...parsed.options, noEmit: true });
}

function isOwnSource(root: string, file: string): boolean {
  const rel = relative(root, file);
  return !rel.startsWith("..") && !rel.includes("node_modules");
}

/**
 * A property's doc comment, its text without the tags (any declaration's: an overridden member may be
 * documented once). A tag alone (only `@defaultValue 4`) is no sentence: it says the default, not what the option does.
 */
function docOf(checker: ts.TypeChecker, symbol: ts.Symbol): string {
  return ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
}

/** The inline object types of a property (`crypto?: { keys: KeyStore }`): their members are options too. */
function inlineObjectTypes(checker: ts.TypeChecker, symbol: ts.Symbol): ts.Type[] {
  const found: ts.Type[] = [];
  for (const decl of symbol.declarations ?? []) {
    if (!(ts.isPropertySignature(decl) || ts.isPropertyDeclaration(decl)) || !decl.type) continue;
    const visit = (node: ts.TypeNode): void => {
      if (ts.isTypeLiteralNode(node)) found.push(checker.getTypeAtLocation(node));
      else if (ts.isUnionTypeNode(node) || ts.isIntersectionTypeNode(node)) node.types.forEach(visit);
      else if (ts.isParenthesizedTypeNode(node)) visit(node.type);
    };
    visit(decl.type);
  }
  return found;
}

/** Every property of the exported options types of the package's entry points (package.json `exports`), nested inline objects included. */
export function optionProperties(root: string = ROOT): OptionProperty[] {
  const entries = [...new Set(entryPoints(root).values())].map((e) => join(root, e));
  const prog = program(root, entries);
  const checker = prog.getTypeChecker();
  const out = new Map<string, OptionProperty>();
  // A member of a one-line inline object (`crypto?: { keys: KeyStore }`) may instead be named in its
  // parent's doc comment, which is what the hover over the parent shows.
  const walk = (type: ts.Type, path: string, depth: number, parentDoc = ""): void => {
    for (const prop of checker.getPropertiesOfType(type)) {
      const decl = prop.declarations?.[0];
      if (!decl || !isOwnSource(root, decl.getSourceFile().fileName)) continue;
      const name = `${path}.${prop.getName()}`;
      // `@internal`: a seam for the runtime's own tests, not an option a user is shown.
      if (out.has(name) || prop.getJsDocTags(checker).some((t) => t.name === "internal")) continue;
      const sf = decl.getSourceFile();
      const line = sf.getLineAndCharacterOfPosition(decl.getStart(sf)).line + 1;
      const doc = docOf(checker, prop);
      const namedByParent = parentDoc.split(/[^\w$]+/).includes(prop.getName());
      out.set(name, { name, file: relative(root, sf.fileName), line, documented: doc !== "" || namedByParent });
      if (depth < 4) for (const inner of inlineObjectTypes(checker, prop)) walk(inner, name, depth + 1, doc);
    }
  };
  for (const entry of entries) {
    const sf = prog.getSourceFile(entry);
    const moduleSymbol = sf && checker.getSymbolAtLocation(sf);
    if (!moduleSymbol) throw new Error(`entry point ${relative(root, entry)} not found`);
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      if (!OPTIONS_NAME.test(exported.getName())) continue;
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (!(target.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias))) continue;
      const type = checker.getDeclaredTypeOfSymbol(target);
      // A union of options (`RedactOption = boolean | {...}`): its object members are the options.
      const parts = type.isUnion() ? type.types : [type];
      for (const part of parts)
        if (part.flags & ts.TypeFlags.Object || part.isIntersection()) walk(part, exported.getName(), 0);
    }
  }
  return [...out.values()].sort((a, b) => a.name.localeCompare(b.name));
}

export function undocumentedOptions(root: string = ROOT): UndocumentedOption[] {
  return optionProperties(root)
    .filter((p) => !p.documented)
    .map(({ name, file, line }) => ({ name, file, line }));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const all = optionProperties();
  const missing = all.filter((p) => !p.documented);
  for (const p of missing) console.log(`${p.name} (${p.file}:${p.line})`);
  console.log(`${missing.length} of ${all.length} option properties have no TSDoc`);
  process.exitCode = missing.length > 0 ? 1 : 0;
}
