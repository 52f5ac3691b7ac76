/**
 * Builds the SDK package into client/dist (`npm run build` here, or `npm run build:client` at the
 * root; `npm pack` and `npm publish` run it first):
 *
 * - index.js and index.d.ts, transpiled from client/index.ts;
 * - appRouter.d.ts, the router's type as a client needs it, printed from the server's.
 *
 * tsc's declaration emit (and the declaration bundlers built on it) would write `AppRouter` as the
 * server has it: the procedures' context (Fastify's request, MikroORM's EntityManager, the app's
 * dependencies), the OpenAPI metadata and the server's own types, all as imports of server modules
 * and server-only packages. A client uses none of that: only each procedure's kind, input and
 * output, and the error shape. So this script asks the checker for exactly those, prints them as
 * plain types (objects, unions, literals, arrays: what zod's inferred types come to) and writes a
 * router type over @trpc/server's own procedure types. Three checks make the file trustworthy:
 * it imports nothing but @trpc/*, it type-checks on its own (strict, no skipLibCheck), and its
 * inputs, outputs and error shape are mutually assignable with the server's.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const clientDir = import.meta.dirname;
const projectRoot = path.dirname(clientDir);
const outDir = path.join(clientDir, 'dist');
const routerFile = path.join(projectRoot, 'server/trpc/router.ts');
/** What the emitted declarations may import: the package's dependencies and its own files. */
const allowedImports = [/^@trpc\/(client|server)$/, /^\.\/[\w-]+\.js$/];

class BuildError extends Error {}

function main() {
  const started = Date.now();
  const options = rootCompilerOptions();
  const program = ts.createProgram({ rootNames: [routerFile], options });
  const checker = program.getTypeChecker();
  const printer = new PlainTypePrinter(checker, program);

  const routerType = typeOfExport(checker, program, routerFile, 'appRouter');
  const def = propertyType(checker, routerType, '_def');
  const rootTypes = propertyType(checker, propertyType(checker, def, '_config'), '$types');
  const record = propertyType(checker, def, 'record');

  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, 'appRouter.d.ts'), appRouterDeclarations(checker, printer, record, rootTypes));
  writeIndex();

  checkImports();
  checkStandalone();
  checkAgainstServer(program, options);
  console.log(`client/dist built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

function rootCompilerOptions(): ts.CompilerOptions {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    path.join(projectRoot, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new BuildError(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new BuildError('tsconfig.json could not be read');
  return parsed.options;
}

function typeOfExport(checker: ts.TypeChecker, program: ts.Program, file: string, name: string) {
  const source = program.getSourceFile(file);
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  const symbol = moduleSymbol && checker.getExportsOfModule(moduleSymbol).find((s) => s.name === name);
  if (!symbol) throw new BuildError(`${path.relative(projectRoot, file)} exports no ${name}`);
  return checker.getTypeOfSymbol(symbol);
}

function propertyType(checker: ts.TypeChecker, type: ts.Type, name: string) {
  const symbol = type.getProperty(name);
  if (!symbol) throw new BuildError(`expected a property ${name} in ${checker.typeToString(type)}`);
  return checker.getTypeOfSymbol(symbol);
}

function appRouterDeclarations(checker: ts.TypeChecker, printer: PlainTypePrinter, record: ts.Type, rootTypes: ts.Type) {
  const transformer = checker.typeToString(propertyType(checker, rootTypes, 'transformer'));
  if (transformer !== 'false') throw new BuildError(`the router has a transformer (${transformer}); the client would need it too`);
  const routes = restRoutes();
  const kinds = { query: 'TRPCQueryProcedure', mutation: 'TRPCMutationProcedure', subscription: 'TRPCSubscriptionProcedure' };
  const used = new Set<string>();

  const printRecord = (type: ts.Type, prefix: string, indent: string): string => {
    const lines = type.getProperties().map((symbol) => {
      const value = checker.getTypeOfSymbol(symbol);
      const procedurePath = `${prefix}${symbol.name}`;
      const procedureDef = value.getProperty('_def') && propertyType(checker, value, '_def');
      if (!procedureDef?.getProperty('procedure'))
        return `${indent}  ${symbol.name}: ${printRecord(value, `${procedurePath}.`, `${indent}  `)};`;
      const kind = checker.typeToString(propertyType(checker, procedureDef, 'type')).replaceAll('"', '') as keyof typeof kinds;
      if (!kinds[kind]) throw new BuildError(`${procedurePath}: unknown procedure kind ${kind}`);
      used.add(kinds[kind]);
      const types = propertyType(checker, procedureDef, '$types');
      const inner = `${indent}    `;
      const input = printer.print(propertyType(checker, types, 'input'), `${procedurePath} input`, inner);
      const output = printer.print(propertyType(checker, types, 'output'), `${procedurePath} output`, inner);
      const route = routes.get(procedurePath);
      const doc = route ? `${indent}  /** ${route} */\n` : '';
      return `${doc}${indent}  ${symbol.name}: ${kinds[kind]}<{\n${inner}input: ${input};\n${inner}output: ${output};\n${inner}meta: object;\n${indent}  }>;`;
    });
    return `{\n${lines.join('\n')}\n${indent}}`;
  };

  const errorShape = printer.print(propertyType(checker, rootTypes, 'errorShape'), 'the error shape', '');
  const procedures = printRecord(record, '', '  ');
  return `// Written by client/build.ts from the server's router (server/trpc/router.ts); do not edit.
// Each procedure's input and output as plain types, and nothing of the server.
import type { ${['TRPCBuiltRouter', ...[...used].sort()].join(', ')} } from '@trpc/server';

/** What a failed call carries as \`error.shape\`; \`error.data\` is its \`data\`. */
export type BrowserflowErrorShape = ${errorShape};

/** The service's tRPC router, for \`createTRPCClient<AppRouter>\` and tRPC's type helpers. */
export type AppRouter = TRPCBuiltRouter<
  { ctx: object; meta: object; errorShape: BrowserflowErrorShape; transformer: false },
  ${procedures}
>;
`;
}

/**
 * Each procedure's REST route and summary, `root.info` → "GET /api — API version and …", for the
 * declarations' doc comments. Read from the router's metadata, a value, so the module is loaded.
 */
function restRoutes() {
  // Keyed by path (`root.info`) at run time, though typed as the nested record.
  const procedures = loadedRouter._def.procedures as unknown as Record<string, { _def: { meta?: { openapi?: OpenApiRoute } } }>;
  const routes = new Map<string, string>();
  for (const [name, procedure] of Object.entries(procedures)) {
    const route = procedure._def.meta?.openapi;
    if (route) routes.set(name, `${route.method} ${route.path}${route.summary ? ` — ${route.summary}` : ''}`.replaceAll('*/', '*\\/'));
  }
  return routes;
}

type OpenApiRoute = { method: string; path: string; summary?: string };

/**
 * Prints a type structurally, whatever names it had on the server: an alias or interface declared
 * in the project would otherwise be printed by a name the client does not have. Names from the
 * standard library (`Record`, `Date`) stay names. A type the SDK cannot carry (a function, a
 * recursive type, an unresolved generic) stops the build with the procedure it belongs to.
 */
class PlainTypePrinter {
  private readonly inProgress = new Set<ts.Type>();
  private readonly checker: ts.TypeChecker;
  private readonly program: ts.Program;

  constructor(checker: ts.TypeChecker, program: ts.Program) {
    this.checker = checker;
    this.program = program;
  }

  print(type: ts.Type, where: string, indent: string): string {
    if (this.inProgress.has(type))
      throw new BuildError(`${where}: a recursive type (${this.checker.typeToString(type)}) cannot be printed plain`);
    this.inProgress.add(type);
    try {
      return this.printType(type, where, indent);
    } finally {
      this.inProgress.delete(type);
    }
  }

  private printType(type: ts.Type, where: string, indent: string): string {
    const { checker } = this;
    const F = ts.TypeFlags;
    if (type.flags & F.EnumLiteral && type.isLiteral()) return JSON.stringify(type.value);
    if (type.isUnion()) return this.printUnion(type, where, indent);
    if (
      type.flags &
        (F.Any | F.Unknown | F.Never | F.Void | F.Undefined | F.Null | F.String | F.Number | F.Boolean | F.BigInt | F.ESSymbol) ||
      type.flags & (F.StringLiteral | F.NumberLiteral | F.BooleanLiteral | F.BigIntLiteral | F.TemplateLiteral | F.NonPrimitive)
    )
      return checker.typeToString(type);
    if (type.isIntersection()) {
      // Objects merge into one (`DefaultErrorShape & {…}` is what a client reads as one shape);
      // anything else, such as a branded string, stays an intersection.
      if (type.types.every((t) => t.flags & F.Object)) return this.printObject(type, where, indent);
      return type.types.map((t) => this.parenthesize(this.print(t, where, indent))).join(' & ');
    }
    if (type.flags & F.Object) {
      const library = this.libraryName(type);
      if (library !== undefined) {
        const args = (type.aliasSymbol ? type.aliasTypeArguments : this.typeArguments(type)) ?? [];
        return args.length ? `${library}<${args.map((a) => this.print(a, where, indent)).join(', ')}>` : library;
      }
      if (checker.isArrayType(type)) {
        const [element] = checker.getTypeArguments(type as ts.TypeReference);
        const readonly = type.getSymbol()?.name === 'ReadonlyArray' ? 'readonly ' : '';
        return `${readonly}${this.parenthesize(this.print(element!, where, indent))}[]`;
      }
      if (checker.isTupleType(type)) return this.printTuple(type as ts.TypeReference, where, indent);
      return this.printObject(type, where, indent);
    }
    throw new BuildError(`${where}: cannot print ${checker.typeToString(type)} plain (type flags ${type.flags})`);
  }

  private printUnion(type: ts.UnionType, where: string, indent: string) {
    const parts: string[] = [];
    const booleans = type.types.filter((t) => t.flags & ts.TypeFlags.BooleanLiteral);
    // `T | null | undefined`, as tsc writes it, rather than the checker's internal order.
    const last = ts.TypeFlags.Null | ts.TypeFlags.Undefined;
    const members = [...type.types.filter((t) => !(t.flags & last)), ...type.types.filter((t) => t.flags & last)];
    for (const member of members) {
      if (booleans.length === 2 && member.flags & ts.TypeFlags.BooleanLiteral) {
        if (member === booleans[0]) parts.push('boolean');
        continue;
      }
      parts.push(this.print(member, where, indent));
    }
    return parts.join(' | ');
  }

  private printTuple(type: ts.TypeReference, where: string, indent: string) {
    const target = type.target as ts.TupleType;
    const elements = this.checker.getTypeArguments(type).map((element, i) => {
      const printed = this.print(element, where, indent);
      const flags = target.elementFlags[i] ?? ts.ElementFlags.Required;
      if (flags & ts.ElementFlags.Variable) return `...${this.parenthesize(printed)}[]`;
      return flags & ts.ElementFlags.Optional ? `${this.parenthesize(printed)}?` : printed;
    });
    return `${target.readonly ? 'readonly ' : ''}[${elements.join(', ')}]`;
  }

  private printObject(type: ts.Type, where: string, indent: string) {
    const { checker } = this;
    if (type.getCallSignatures().length || type.getConstructSignatures().length)
      throw new BuildError(`${where}: ${checker.typeToString(type)} is a function, which no call can carry`);
    const inner = `${indent}  `;
    const members: string[] = [];
    for (const info of checker.getIndexInfosOfType(type)) {
      const readonly = info.isReadonly ? 'readonly ' : '';
      members.push(`${inner}${readonly}[key: ${checker.typeToString(info.keyType)}]: ${this.print(info.type, where, inner)};`);
    }
    for (const property of checker.getPropertiesOfType(type)) {
      const optional = property.flags & ts.SymbolFlags.Optional ? '?' : '';
      const name = /^[A-Za-z_$][\w$]*$/.test(property.name) ? property.name : JSON.stringify(property.name);
      const value = this.print(checker.getTypeOfSymbol(property), `${where}.${property.name}`, inner);
      members.push(`${inner}${name}${optional}: ${value};`);
    }
    return members.length ? `{\n${members.join('\n')}\n${indent}}` : '{}';
  }

  /** The name of a standard-library type (`Date`, `Record`), which every client has too. */
  private libraryName(type: ts.Type) {
    const symbol = type.aliasSymbol ?? type.getSymbol();
    const declaration = symbol?.declarations?.[0];
    if (!symbol || !declaration || !this.program.isSourceFileDefaultLibrary(declaration.getSourceFile())) return undefined;
    // Arrays and tuples are printed as `T[]` and `[A, B]`; an object literal typed from the
    // library's `__type` has no name of its own.
    if (['Array', 'ReadonlyArray', '__type', '__object'].includes(symbol.name)) return undefined;
    return symbol.name;
  }

  private typeArguments(type: ts.Type) {
    return type.flags & ts.TypeFlags.Object && (type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference
      ? this.checker.getTypeArguments(type as ts.TypeReference)
      : [];
  }

  /** `A | B` and `A & B` need parentheses as an array's element or an intersection's member. */
  private parenthesize(printed: string) {
    return / [|&] /.test(topLevel(printed)) ? `(${printed})` : printed;
  }
}

/** The text outside any braces, brackets, parentheses, angle brackets and string literals. */
function topLevel(printed: string) {
  let depth = 0;
  let quoted = false;
  let out = '';
  for (let i = 0; i < printed.length; i++) {
    const c = printed[i]!;
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if ('{[(<'.includes(c)) depth++;
    else if ('}])>'.includes(c)) depth--;
    else if (depth === 0) out += c;
  }
  return out;
}

function writeIndex() {
  const fileName = path.join(clientDir, 'index.ts');
  const source = readFileSync(fileName, 'utf8');
  const compilerOptions: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2024,
    module: ts.ModuleKind.ESNext,
    verbatimModuleSyntax: true,
    rewriteRelativeImportExtensions: true,
    allowImportingTsExtensions: true,
    declaration: true,
  };
  const js = ts.transpileModule(source, { fileName, compilerOptions, reportDiagnostics: true });
  // Declarations without a checker: every export of index.ts states its type (isolatedDeclarations).
  const dts = ts.transpileDeclaration(source, {
    fileName,
    compilerOptions: { ...compilerOptions, isolatedDeclarations: true },
    reportDiagnostics: true,
  });
  const problems = [...(js.diagnostics ?? []), ...(dts.diagnostics ?? [])];
  if (problems.length) throw new BuildError(ts.formatDiagnostics(problems, formatHost));
  writeFileSync(path.join(outDir, 'index.js'), js.outputText);
  // Declaration emit keeps the source's `./appRouter.ts`; the package has `./appRouter.d.ts`.
  writeFileSync(path.join(outDir, 'index.d.ts'), dts.outputText.replace(/(from\s+['"]\.\/[\w-]+)\.ts(['"])/g, '$1.js$2'));
}

/** Every module the declarations name is one the package depends on, or one of its own files. */
function checkImports() {
  for (const file of ['index.d.ts', 'appRouter.d.ts']) {
    const info = ts.preProcessFile(readFileSync(path.join(outDir, file), 'utf8'), true, true);
    const references = [...info.referencedFiles, ...info.typeReferenceDirectives, ...info.libReferenceDirectives];
    if (references.length) throw new BuildError(`dist/${file} has /// references: ${references.map((r) => r.fileName).join(', ')}`);
    const stray = info.importedFiles.map((i) => i.fileName).filter((name) => !allowedImports.some((allowed) => allowed.test(name)));
    if (stray.length) throw new BuildError(`dist/${file} imports ${stray.join(', ')}: only @trpc/client, @trpc/server and ./*.js may be`);
  }
}

/** The declarations type-check by themselves, strictly, against the standard library and @trpc/*. */
function checkStandalone() {
  const entry = path.join(outDir, 'index.d.ts');
  const program = ts.createProgram({
    rootNames: [entry],
    options: {
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      types: [],
      lib: ['lib.es2024.d.ts', 'lib.dom.d.ts'],
      target: ts.ScriptTarget.ES2024,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
    },
  });
  const ours = program.getSourceFiles().filter((f) => path.dirname(f.fileName) === outDir);
  const problems = ours.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)]);
  if (problems.length)
    throw new BuildError(`the declarations do not type-check on their own:\n${ts.formatDiagnostics(problems, formatHost)}`);
}

/**
 * The printed router means the same as the server's: its inputs, outputs and error shape are
 * assignable both ways, so a client is refused nothing the server takes and promised nothing it
 * does not send. Checked by a file in memory added to the first program, whose work is reused.
 */
function checkAgainstServer(serverProgram: ts.Program, options: ts.CompilerOptions) {
  const checkFile = path.join(clientDir, '__sameAsServer.ts');
  const checkSource = `import type { inferRouterError, inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter as Printed } from './dist/appRouter.js';
import type { AppRouter as Server } from '../server/trpc/router.ts';
declare const printed: { inputs: inferRouterInputs<Printed>; outputs: inferRouterOutputs<Printed>; error: inferRouterError<Printed> };
declare const server: { inputs: inferRouterInputs<Server>; outputs: inferRouterOutputs<Server>; error: inferRouterError<Server> };
export const serverTakesPrinted: typeof server = printed;
export const printedTakesServer: typeof printed = server;
`;
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, ...rest) =>
    fileName === checkFile
      ? ts.createSourceFile(fileName, checkSource, languageVersion)
      : getSourceFile(fileName, languageVersion, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => fileName === checkFile || fileExists(fileName);
  const program = ts.createProgram({ rootNames: [routerFile, checkFile], options, host, oldProgram: serverProgram });
  const source = program.getSourceFile(checkFile)!;
  const problems = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
  if (problems.length)
    throw new BuildError(`dist/appRouter.d.ts differs from the server's router:\n${ts.formatDiagnostics(problems, formatHost)}`);
}

const formatHost: ts.FormatDiagnosticsHost = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => projectRoot,
  getNewLine: () => '\n',
};

// Loaded for its procedures' metadata (restRoutes); loading it starts nothing.
const { appRouter: loadedRouter } = await import('../server/trpc/router.ts');

try {
  main();
} catch (error) {
  // No half-checked dist for a later `npm pack --ignore-scripts` to ship.
  rmSync(outDir, { recursive: true, force: true });
  if (!(error instanceof BuildError)) throw error;
  console.error(`client build failed: ${error.message}`);
  process.exitCode = 1;
}
