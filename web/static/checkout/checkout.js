// The hosted checkout's script. The server renders every state (the page works without this
// file); the script only makes it live: it polls GET /v1/checkout/:id (ETag, so an unchanged
// poll is a bodiless 304) and, when the link changed, swaps in the server's new panel. It also
// ticks the countdown, copies, sends the M-Pesa prompt without a reload, and announces state
// changes to screen readers. No framework, no build step: it must load fast on a cheap phone.
(function () {
  'use strict';
  var main = document.getElementById('checkout');
  var config = JSON.parse(document.getElementById('checkout-config').textContent);
  var announcer = document.getElementById('announce');
  var msg = config.messages;
  var supported = ['en', 'sw'];
  var locales = { en: 'en-KE', sw: 'sw-KE' };
  var state = config.state;
  var rail = config.rail;
  var etag = null;
  var lastBody = null;
  var baseMs = 4000;
  var delayMs = baseMs;
  var timer = null;
  var hinted = /[?&]hl=/.test(location.search);

  // The browser's languages decide when the customer has not switched. Accept-Language usually
  // says the same; where it does not (a webview), the page is asked again with ?hl=, which the
  // server follows for this visit and never remembers (only the switch, ?lang=, is remembered).
  if (!config.chosen && navigator.languages) {
    var wanted = null;
    for (var i = 0; i < navigator.languages.length && !wanted; i++) {
      var base = String(navigator.languages[i]).toLowerCase().split('-')[0];
      if (supported.indexOf(base) >= 0) wanted = base;
    }
    if (wanted && wanted !== config.lang) {
      location.replace('?hl=' + wanted + (rail ? '&rail=' + rail : ''));
      return;
    }
  }

  function announce(text) {
    announcer.textContent = '';
    setTimeout(function () { announcer.textContent = text; }, 50);
  }

  function pad(n) { return n < 10 ? '0' + n : String(n); }

  function tick() {
    var nodes = main.querySelectorAll('[data-countdown]');
    for (var i = 0; i < nodes.length; i++) {
      var left = Math.max(0, Math.floor((Number(nodes[i].getAttribute('data-countdown')) - Date.now()) / 1000));
      var h = Math.floor(left / 3600), m = Math.floor((left % 3600) / 60), s = left % 60;
      nodes[i].textContent = nodes[i].getAttribute('data-label').replace('{time}', h > 0 ? h + ':' + pad(m) + ':' + pad(s) : m + ':' + pad(s));
      if (left === 0 && state !== 'expired') pollSoon(0);
    }
  }

  // Dates arrive in Kenyan time; shown again in the phone's own time zone.
  function localTimes() {
    var nodes = main.querySelectorAll('time[datetime]');
    try {
      var fmt = new Intl.DateTimeFormat(locales[config.lang], { dateStyle: 'medium', timeStyle: 'short' });
      for (var i = 0; i < nodes.length; i++) nodes[i].textContent = fmt.format(new Date(nodes[i].getAttribute('datetime')));
    } catch (e) { /* an old browser keeps the server's text */ }
  }

  function enhance() {
    if (navigator.clipboard) {
      var buttons = main.querySelectorAll('button[data-copy]');
      for (var i = 0; i < buttons.length; i++) buttons[i].hidden = false;
    }
    localTimes();
    tick();
  }

  function query() {
    // A switch is carried (cookies may be off); so is a language read from navigator.languages
    // (?hl=), which Accept-Language would not give again. Otherwise the server follows the header.
    var carried = config.chosen ? 'lang=' + config.lang : hinted ? 'hl=' + config.lang : '';
    var parts = (rail ? ['rail=' + rail] : []).concat(carried ? [carried] : []);
    return parts.length ? '?' + parts.join('&') : '';
  }

  function keepLanguageLinks() {
    var links = document.querySelectorAll('nav.lang a[hreflang]');
    for (var i = 0; i < links.length; i++) links[i].href = '?lang=' + links[i].getAttribute('hreflang') + (rail ? '&rail=' + rail : '');
  }

  // Fetches the server's panel for the current rail and swaps it in, keeping what the customer typed and where they were.
  function refresh(focusTitle) {
    return fetch('/p/' + config.id + '/panel' + query(), { headers: { accept: 'text/html' } })
      .then(function (res) { return res.ok ? res.text() : null; })
      .then(function (html) {
        if (html === null) return;
        var active = document.activeElement;
        var wasInside = !!active && main.contains(active);
        var activeId = wasInside ? active.id || active.getAttribute('data-rail') : null;
        var phone = document.getElementById('phone');
        var typed = phone ? phone.value : '';
        main.innerHTML = html;
        var section = main.querySelector('[data-state]');
        var next = section ? section.getAttribute('data-state') : 'waiting';
        main.setAttribute('data-state', next);
        var newPhone = document.getElementById('phone');
        if (newPhone && typed && !newPhone.value) newPhone.value = typed;
        enhance();
        var title = document.getElementById('state-title');
        if (next !== state) {
          state = next;
          if (title) announce(title.textContent);
        }
        // Focus stays where it was; if that part is gone, it moves to the new state's title.
        var again = activeId && (document.getElementById(activeId) || main.querySelector('[data-rail="' + activeId + '"]'));
        if (again && !focusTitle) again.focus();
        else if ((focusTitle || wasInside) && title) title.focus();
      });
  }

  function pollSoon(ms) {
    clearTimeout(timer);
    if (state === 'confirmed' || state === 'cancelled') return;
    timer = setTimeout(poll, ms);
  }

  // Every 4 s while the tab is seen; hidden or failing, the wait doubles up to a minute.
  // An expired link is still watched for a late payment, every 30 s.
  function poll() {
    fetch('/v1/checkout/' + config.id, { headers: etag ? { 'if-none-match': etag } : {} })
      .then(function (res) {
        if (res.status === 304) return false;
        if (!res.ok) throw new Error(String(res.status));
        etag = res.headers.get('etag');
        return res.text().then(function (body) {
          var changed = body !== lastBody;
          lastBody = body;
          return changed;
        });
      })
      .then(function (changed) {
        delayMs = document.hidden ? Math.min(delayMs * 2, 60000) : state === 'expired' ? 30000 : baseMs;
        return changed ? refresh(false) : null;
      }, function () {
        delayMs = Math.min(delayMs * 2, 60000);
      })
      .then(function () { pollSoon(delayMs); });
  }

  document.addEventListener('visibilitychange', function () {
    if (!document.hidden) {
      delayMs = baseMs;
      pollSoon(0);
    }
  });

  main.addEventListener('click', function (e) {
    var target = e.target.closest ? e.target.closest('a[data-rail], button[data-copy]') : null;
    if (!target) return;
    if (target.hasAttribute('data-copy')) {
      navigator.clipboard.writeText(target.getAttribute('data-copy')).then(function () {
        target.textContent = msg.copied;
        announce(msg.copied);
      });
      return;
    }
    e.preventDefault();
    rail = target.getAttribute('data-rail');
    history.replaceState(null, '', query());
    keepLanguageLinks();
    refresh(false).then(function () {
      var link = main.querySelector('[data-rail="' + rail + '"]');
      if (link) link.focus();
    });
  });

  main.addEventListener('submit', function (e) {
    var form = e.target;
    if (!form.hasAttribute('data-mpesa')) return;
    e.preventDefault();
    var input = document.getElementById('phone');
    var error = document.getElementById('phone-error');
    var button = form.querySelector('button[type=submit]');
    var digits = input.value.replace(/[\s\-().]/g, '').replace(/^\+/, '');
    var phone = /^0\d{9}$/.test(digits) ? '254' + digits.slice(1) : digits;
    function fail(text) {
      error.textContent = text;
      input.setAttribute('aria-invalid', 'true');
      button.disabled = false;
      button.textContent = msg.sendPrompt;
      input.focus();
    }
    if (!/^254\d{9}$/.test(phone)) return fail(msg.err_phone);
    error.textContent = '';
    input.removeAttribute('aria-invalid');
    button.disabled = true;
    button.textContent = msg.sending;
    announce(msg.sending);
    fetch('/v1/checkout/' + config.id + '/pay/mobile-money', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ phoneNumber: phone }),
    }).then(function (res) {
      return res.json().then(function (body) {
        if (res.ok) return refresh(true).then(function () { pollSoon(baseMs); });
        var err = (body && body.error) || {};
        fail(err.code === 'invalid_field' ? msg.err_phone : msg['code_' + err.code] || msg.err_generic);
      });
    }).catch(function () { fail(msg.err_network); });
  });

  enhance();
  setInterval(tick, 1000);
  pollSoon(baseMs);
})();
