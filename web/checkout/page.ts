import type { CheckoutView } from '../../services/checkout/view.js';

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** JSON inside a <script type="application/json">: `<` escaped so no string can close the tag. */
const inlineJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c');

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/static/checkout/checkout.css">
</head>
<body>
${body}
</body>
</html>`;
}

/**
 * The page shell. Everything the customer sees is drawn by checkout.js from the inline state,
 * so the first paint and every poll share one renderer.
 */
export function renderCheckoutPage(data: CheckoutView): string {
  return layout(
    `Pay ${data.storeName}`,
    `<main class="card" id="checkout" aria-live="polite">
  <noscript><p class="notice">This checkout needs JavaScript to show payment options.</p></noscript>
</main>
<footer class="foot">Secured by Malipo · funds go straight to the merchant's own wallet</footer>
<script type="application/json" id="checkout-state">${inlineJson(data)}</script>
<script src="/static/checkout/checkout.js" defer></script>`,
  );
}

export function renderNotFoundPage(): string {
  return layout(
    'Payment link not found',
    `<main class="card"><h1>Payment link not found</h1><p class="muted">Check the link you were given, or ask the merchant for a new one.</p></main>`,
  );
}
