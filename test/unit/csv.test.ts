import { describe, expect, it } from '@jest/globals';
import { csvCell, csvRow } from '../../domain/csv.js';
import { parseCsv } from '../helpers/csv.js';

describe('CSV cells (RFC 4180)', () => {
  it('leaves plain text as it is, and null empty', () => {
    expect(csvCell('ORDER-77b')).toBe('ORDER-77b');
    expect(csvCell('1500')).toBe('1500');
    expect(csvCell('')).toBe('');
    expect(csvCell(null)).toBe('');
  });

  it('quotes a cell holding a comma, a quote, CR or LF, doubling its quotes', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('line1\nline2')).toBe('"line1\nline2"');
    expect(csvCell('line1\r\nline2')).toBe('"line1\r\nline2"');
  });

  it('neutralises a cell starting with = + - @ tab or CR with a single quote', () => {
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(csvCell('+254712345678')).toBe("'+254712345678");
    expect(csvCell('-2+3')).toBe("'-2+3");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('\t=1')).toBe("'\t=1");
    expect(csvCell('\r=1')).toBe(`"'\r=1"`);
    // Only the first character matters: inside a cell these are text already.
    expect(csvCell('a=b')).toBe('a=b');
  });

  it('writes rows that read back cell for cell, never split by what a cell holds', () => {
    const cells = ['pl_1', 'a,"b"\r\nc', '=1+1', null, '12.5'];
    const text = csvRow(cells) + csvRow(['x', 'y', 'z', 'w', 'v']);
    expect(text.endsWith('\r\n')).toBe(true);
    expect(parseCsv(text)).toEqual([['pl_1', 'a,"b"\r\nc', "'=1+1", '', '12.5'], ['x', 'y', 'z', 'w', 'v']]);
  });
});
