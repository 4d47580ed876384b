/** Escapes text for HTML content and double-quoted attributes. */
export const esc = (s: string | number): string =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** JSON inside a <script type="application/json">: `<` escaped so no string can close the tag. */
export const inlineJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c');

/** Only web links leave the page: a merchant's redirect URL that is not http(s) is not shown. */
export const isWebUrl = (url: string | null): url is string => !!url && /^https?:\/\//i.test(url);
