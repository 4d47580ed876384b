/** Reading Prometheus' text format in tests: one series, a metric's sum, every label value. */

/** The value of one series (0 when absent): `name{a="x",b="y"}` with the labels in any order. */
export function valueOf(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const found = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(m[3]);
  }
  return 0;
}

/** The sum of a metric's series over all their labels (0 when it has none). */
export function sumOf(text: string, name: string): number {
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `)).reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

export function labelValues(text: string): string[] {
  return [...text.matchAll(/\w+="((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
}

/**
 * Label values that look like an id (`pl_…`, `evt_…`, a key), an address, a phone number or a
 * long number, or that contain one of `known` (the test's own link id, key, phone…).
 */
export function offendingLabels(values: readonly string[], known: readonly string[]): string[] {
  return values.filter((v) => /(^|_)(pl|inv|evt|we|wd|key|sk|pk)_|0x[0-9a-f]{8}|^\+?254\d{6}|^\d{9,}$|ws_CO_/i.test(v) || known.some((k) => v.includes(k)));
}
