import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * Workflow code stays readable as a state machine: no function in workflows/ runs over 80 lines.
 * Every function counts — declarations, methods, constructors, accessors, function expressions and
 * arrow functions, inner ones too — from its first token (its JSDoc and leading comments not
 * counted) to its closing token, inclusive. A long function fails here with its name and place.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const maxLines = 80;

export interface FunctionLength {
  where: string;
  name: string;
  lines: number;
}

/** The length of every function in a TypeScript source, by the rule above. */
export function functionLengths(fileName: string, text: string): FunctionLength[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: FunctionLength[] = [];
  const nameOf = (node: ts.Node): string => {
    const named = node as ts.Node & { name?: ts.Node };
    if (named.name && ts.isIdentifier(named.name)) return named.name.text;
    if (ts.isConstructorDeclaration(node)) return 'constructor';
    const parent = node.parent;
    if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText(source);
    if (ts.isCallExpression(parent)) return `(an argument of ${parent.expression.getText(source)})`;
    return '(anonymous)';
  };
  const visit = (node: ts.Node, outer: string[]): void => {
    let path = outer;
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      path = [...outer, nameOf(node)];
      found.push({ where: `${fileName}:${first + 1}`, name: path.join(' > '), lines: last - first + 1 });
    }
    ts.forEachChild(node, (child) => visit(child, path));
  };
  visit(source, []);
  return found;
}

const workflowFunctions = () =>
  readdirSync(join(root, 'workflows'))
    .filter((name) => name.endsWith('.ts'))
    .flatMap((name) => functionLengths(`workflows/${name}`, readFileSync(join(root, 'workflows', name), 'utf8')));

describe('workflow functions', () => {
  it(`are at most ${maxLines} lines each`, () => {
    const long = workflowFunctions().filter((f) => f.lines > maxLines).map((f) => `${f.where} ${f.name}: ${f.lines} lines`);
    expect(long).toEqual([]);
  });

  it('are all counted, inner closures and arrow functions included', () => {
    const sample = [
      'export async function outer(): Promise<void> {',
      '  const inner = async () => {',
      '    await Promise.resolve();',
      '  };',
      '  setTimeout(() => inner(), 1);',
      '  class Book { method(): number { return 1; } }',
      '}',
    ].join('\n');
    expect(functionLengths('sample.ts', sample).map((f) => [f.name, f.lines])).toEqual([
      ['outer', 7],
      ['outer > inner', 3],
      ['outer > (an argument of setTimeout)', 1],
      ['outer > method', 1],
    ]);
    expect(workflowFunctions().find((f) => f.name === 'paymentLink')).toBeDefined();
  });
});
