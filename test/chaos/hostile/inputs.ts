import fc from 'fast-check';

/**
 * Hostile values for the fuzzer: numbers at and past every edge, number-like strings, unicode
 * that breaks naive code (RTL, zero-width, astral, lone surrogates, NUL), prototype-pollution
 * keys, deep nesting, megabyte fields, and the wrong shape where another is expected.
 */

export const edgeNumbers = [
  0, -0, 1, -1, 0.1, 1e-7, -1e-7, 1e308, -1e308, 5e-324, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 32, 2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2,
  -(2 ** 53), 43_200, 43_201, 10_000, 10_001, 1440, 100, 101, 20, 21,
];

/** JSON number texts JSON.stringify cannot produce: out of range, exponents, long mantissas. */
export const rawNumberTexts = ['1e309', '-1e309', '1e-7', '1E+2', '-0', '0.0000000000000000000001', '123456789012345678901234567890', '1.0', '1e2', '0e0'];

export const numberishStrings = [
  'NaN', '-NaN', 'Infinity', '-Infinity', '1e309', '1e-7', '-0', '0x10', '0b1', '0o7', '1_000', ' 1', '1 ', '1.', '.5', '+1', '00012',
  '1,5', '1.5.5', '١٢٣', '１２', '٣', '1e400', '9'.repeat(400), '0.' + '0'.repeat(300) + '1', '-', '', ' ', 'null', 'true', 'undefined',
  '10.505', '10.50', '0.000001', '0.0000001', '254712345678', '+254712345678', '2547123456789', '07123456789',
];

export const unicodeStrings = [
  '\u202Eevil\u202C', '\u200B', 'a\u200Db', '\uFEFFbom', '𝟘😀👨‍👩‍👧', '\uD800', '\uDFFF', 'x\uD83Dy', '\u0000', 'a\u0000b', '\u0001\u001f\u007f',
  'e\u0301', '\u0130', 'ß', 'ﬁ', 'ｓｋ＿ｔｅｓｔ', 'Ω≈ç√', '\r\n\r\nHTTP/1.1 200 OK', '\t', '%00', '%2e%2e%2f', '../../etc/passwd', '..\\..\\',
  "' OR 1=1 --", '"; DROP TABLE stores; --', '${7*7}', '{{7*7}}', '<script>alert(1)</script>', 'javascript:alert(1)', '%s%s%s%n',
  '\\u0000', '\\ud800', 'pl_' + '0'.repeat(24), 'pl_ZZZZZZZZZZZZZZZZZZZZZZZZ', 'sk_test_' + 'a'.repeat(40), 'MOBILE_MONEY', 'USDT_BSC', 'test', 'live',
];

export const protoKeys = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'then'];

const char = fc.constantFrom('a', 'Z', '0', '-', '_', '.', ' ', '\u202E', '\u200B', '😀', '\uD800', '\u0000', '%', '/', '?', '#', '&', '=', '"', '\\', 'é', '\n');

/** A short string, often hostile. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...numberishStrings, ...unicodeStrings) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.array(char, { maxLength: 30 }).map((cs) => cs.join('')) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.integer({ min: 300, max: 20_000 }).map((n) => 'x'.repeat(n)) },
);

export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(...edgeNumbers),
  fc.integer(),
  fc.double(),
  fc.integer({ min: -5, max: 50_000 }),
);

/** Any JSON-able value, mostly hostile; nesting up to `depth` levels (the service refuses past 20). */
export function hostileValue(depth = 3): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(
    { weight: 4, arbitrary: hostileString },
    { weight: 4, arbitrary: hostileNumber },
    { weight: 1, arbitrary: fc.constantFrom(true, false, null) },
    { weight: 1, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: fc.constant([]) },
  );
  if (depth <= 0) return leaf;
  const inner = hostileValue(depth - 1);
  return fc.oneof(
    { weight: 6, arbitrary: leaf },
    { weight: 1, arbitrary: fc.array(inner, { maxLength: 4 }) },
    { weight: 1, arbitrary: fc.dictionary(fc.oneof(hostileString, fc.constantFrom(...protoKeys)), inner, { maxKeys: 4 }) },
    { weight: 1, arbitrary: fc.integer({ min: 15, max: 40 }).map((n) => nest(n)) },
  );
}

/** An object nested `levels` deep. */
export function nest(levels: number): unknown {
  let v: unknown = 'deep';
  for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { k: v };
  return v;
}

/**
 * Percent-encodes a string as a hostile client would put it in a URL: UTF-8 bytes, except that a
 * lone surrogate becomes its (invalid) three-byte CESU form, which no decoder accepts.
 */
export function pctEncode(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const isHigh = c >= 0xd800 && c <= 0xdbff;
    const next = s.charCodeAt(i + 1);
    if (isHigh && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(s.slice(i, i + 2));
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(s[i]!);
    }
  }
  return out;
}

/** Percent-encodings that are themselves broken. */
export const brokenEncodings = ['%', '%zz', '%E0%A4%A', '%FF', '%C0%AF', '%00', '%2F', '%252F', '%u0041', '%%', '..%2F..%2F'];

/** A hostile path segment, already encoded for the wire. */
export const hostileSegment: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: hostileString.filter((s) => s.length > 0 && s.length < 2000).map(pctEncode) },
  { weight: 1, arbitrary: fc.constantFrom(...brokenEncodings) },
  { weight: 1, arbitrary: fc.constantFrom(...edgeNumbers.map(String), ...rawNumberTexts) },
);

/** A header value Node's HTTP client will send (latin-1, no CR/LF): the server sees these bytes. */
export const hostileHeaderValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength: 300 }),
  fc.constantFrom('', ' ', 'x'.repeat(256), 'x'.repeat(255), '\u00ff\u00fe', 'null', '../../', '%00', '1e309'),
);

export const contentTypes = [
  'application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json; charset=latin1', 'application/json; charset=utf-16',
  'text/plain', 'text/html', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/octet-stream',
  'application/xml', 'application/json, text/html', 'application/vnd.api+json', 'json', ';', 'application/', '*/*', '\u00ff/\u00fe',
];
