/**
 * How deep free-form JSON may nest. Each object or array is one level: `{"a":1}` is 1 and
 * `{"a":{"b":[1]}}` is 3. Payment-link and invoice `metadata` may nest this deep, and so may any
 * field of any JSON request body (api/plugins/body-depth.ts).
 */
export const maxJsonDepth = 20;

/** What every refusal says, after the field's name. */
export const jsonDepthRule = (levels: number) => `must be nested at most ${levels} levels deep (each object or array is one level)`;

/**
 * Whether a parsed JSON value nests objects or arrays more than `limit` levels deep. It walks
 * with its own stack, never recursing, so any value can be asked about, and it stops at the
 * first container past the limit: a deep value costs no more than `limit` levels of it.
 */
export function jsonDepthExceeds(value: unknown, limit: number): boolean {
  const pending: [node: unknown, depth: number][] = [[value, 0]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Object.values(node)) {
      if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
    }
  }
  return false;
}
