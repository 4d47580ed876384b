/**
 * CSV cells and rows, RFC 4180 (docs/reports.md), pure.
 *
 * - A cell holding a comma, a double quote, CR or LF is quoted, its quotes doubled: a row is
 *   never split by what a merchant put in merchantRef or metadata.
 * - A cell that starts with `=`, `+`, `-`, `@`, a tab or CR is neutralised against spreadsheet
 *   formula injection (OWASP "CSV Injection"): prefixed with a single quote, so a spreadsheet
 *   shows it as text and never evaluates it. Report numbers are never negative, so no number is
 *   touched.
 * - Rows end with CRLF. null is an empty cell.
 */
const formulaStart = /^[=+\-@\t\r]/;
const needsQuotes = /[",\r\n]/;

export function csvCell(value: string | null | undefined): string {
  if (value === null || value === undefined) return '';
  const text = formulaStart.test(value) ? `'${value}` : value;
  return needsQuotes.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRow(cells: readonly (string | null | undefined)[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}
