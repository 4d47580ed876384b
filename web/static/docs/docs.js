// Draws the API reference with Redoc's standalone bundle (served by the app itself, see
// web/docs/routes.ts) from the app's own OpenAPI document.
(function () {
  var el = document.getElementById('reference');
  window.Redoc.init(el.getAttribute('data-spec-url'), {
    // Keeps the page to the app's own origin: no logo, fonts or anything else from elsewhere.
    hideLoading: true,
    expandResponses: '200,201',
    theme: { typography: { fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif', headings: { fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif' }, code: { fontFamily: 'ui-monospace, Menlo, Consolas, monospace' } } },
  }, el);
})();
